"""The optimal ate pairing on BLS12-381 (one shared Miller loop, one final exponentiation)."""

from .ate import final_exponentiation, miller_loop, multi_pairing, pairing, pairing_product_is_one

__all__ = [
    "final_exponentiation",
    "miller_loop",
    "multi_pairing",
    "pairing",
    "pairing_product_is_one",
]
