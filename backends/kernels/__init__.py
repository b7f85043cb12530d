"""The CUDA sources the GPU backends compile (ff/, ec/, msm/, ntt/, r1cs/); no Python here."""
