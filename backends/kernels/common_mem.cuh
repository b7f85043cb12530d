// Vectorized global-memory access for the fixed-size structs the kernels move around.
#pragma once

#include "common.cuh"

#if defined(__CUDACC__)
// Read a T (size a multiple of 16 bytes, 16-byte aligned) with 16-byte loads.
template <class T>
__device__ __forceinline__ T load_vec(const T* src) {
    static_assert(sizeof(T) % 16 == 0, "load_vec needs a multiple of 16 bytes");
    T out;
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(&out);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
    return out;
}

// Write a T (size a multiple of 16 bytes, 16-byte aligned) with 16-byte stores.
template <class T>
__device__ __forceinline__ void store_vec(T* dst, const T& value) {
    static_assert(sizeof(T) % 16 == 0, "store_vec needs a multiple of 16 bytes");
    const uint4* s = reinterpret_cast<const uint4*>(&value);
    uint4* d = reinterpret_cast<uint4*>(dst);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
}

// The global index of this thread in a 1-D launch, as 64 bits.
__device__ __forceinline__ uint64_t global_thread() {
    return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
#else
// The host build (the kernel headers' test harnesses): plain copies.
template <class T>
inline T load_vec(const T* src) {
    return *src;
}

template <class T>
inline void store_vec(T* dst, const T& value) {
    *dst = value;
}
#endif
