"""circom and snarkjs interop: .r1cs, .wtns and .zkey readers, snarkjs JSON proofs and keys."""
