"""BLS12-381 parameters: the base field q, the scalar field r and the curve parameter x."""

FQ_MODULUS = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB  # noqa: E501
"""The base field modulus q (381 bits): curve coordinates live in Fq."""

FR_MODULUS = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
"""The scalar field modulus r (255 bits): the order of the G1/G2 subgroups and the circuit field."""

FR_TWO_ADICITY = 32
"""The largest s with 2^s dividing r − 1: the biggest power-of-two NTT domain."""

BLS_X = 0xD201000000010000
"""|x|, the absolute value of the curve parameter (x itself is negative)."""

BLS_X_IS_NEGATIVE = True
"""The sign of the curve parameter x."""

FQ_BYTES = 48
"""Bytes in one serialized Fq element."""

FR_BYTES = 32
"""Bytes in one serialized Fr element."""
