#pragma once
#include <cstddef>
#include <cmath>
typedef int cudaError_t; enum { cudaSuccess = 0 };
typedef void* cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
inline const char* cudaGetErrorString(cudaError_t) { return ""; }



inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaGetDeviceCount(int*) { return 0; }
inline cudaError_t cudaSetDevice(int) { return 0; }
struct dim3_ { unsigned x; }; static dim3_ blockIdx, blockDim, threadIdx;
#define __global__
#include <cstdlib>
#include <cstring>
#define cudaMalloc(pp, n) (*(void**)(pp) = malloc(n), 0)
#define cudaMemset(p, v, n) (memset((p), (v), (n)), 0)
#define cudaMemcpy(d, s, n, k) (memcpy((d), (s), (n)), 0)
#define LAUNCH(G, B, call) for (unsigned gi_ = 0; gi_ < (G); ++gi_) for (unsigned ti_ = 0; ti_ < (B); ++ti_) { blockIdx.x = gi_; threadIdx.x = ti_; blockDim.x = (B); call; }
