// Experiment (issue 15, session 13): laycert's emitted 8191x4097 f32 transpose (verbatim, from
// `laycert gen copy --src '(8191,4097):(4097,1)' --dst '(8191,4097):(1,8191)' --shape 8191,4097
// --dtype f32`) against the same kernel with ONE change: the store phase's thread mapping.
// Emitted: 128 threads side by side along a destination run (4 warps write one 128-element
// run, each warp one 128-byte piece; a warp's 16 stores go to 16 runs). Segmented: a warp
// writes a whole run in 4 consecutive stores (f = t / 32 + (k / 4) * 8, s = t % 32 + (k % 4) * 32),
// as cache_hints.cu's kernel does. Every element checked, timed against a D2D copy in rounds.
// nvcc -O3 -arch=sm_90a -o store_runs store_runs.cu && ./store_runs
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
constexpr int M = 8191, N = 4097;
typedef unsigned int elem_t;
struct __align__(8) w8_t { unsigned int x, y; };
struct __align__(16) w16_t { unsigned int x, y, z, w; };
union load_vec_t { unsigned int v; elem_t e[1]; };
union store_vec_t { unsigned int v; elem_t e[1]; };

extern "C" __global__ void __launch_bounds__(256) laycert_emitted(
    const elem_t* __restrict__ src, elem_t* __restrict__ dst)
{
    __shared__ __align__(16) elem_t smem[4096];
    const int t = threadIdx.x;
    const long long bx = blockIdx.y, by = blockIdx.x, bz = blockIdx.z;
    // interior CTAs (every cell inside the tensor) run unguarded; the edge CTAs check each access
    if (bx < 128 && by < 63) {
    // phase 1: global loads of 1 along the first axis, shared stores of 1
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        load_vec_t r;
        {
            const int e = 0;
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            r.v = *reinterpret_cast<const unsigned int*>(src + ((c0) * 4097LL + c1));
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(smem + (o ^ ((o & 992) >> 5))) = *reinterpret_cast<const unsigned int*>(&r.e[e]);
        }
    }
    __syncthreads();
    // phase 2: shared loads of 1, global stores of 1 along the store axis
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        store_vec_t w;
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = t / 128 + k * 2;
            const int s = (t % 128) * 1 + e;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(&w.e[e]) = *reinterpret_cast<const unsigned int*>(smem + (o ^ ((o & 992) >> 5)));
        }
        {
            const int e = 0;
            const int f = t / 128 + k * 2;
            const int s = (t % 128) * 1 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            *reinterpret_cast<unsigned int*>(dst + (c0 + (c1) * 8191LL)) = w.v;
        }
    }
    } else {
    // phase 1: global loads of 1 along the first axis, shared stores of 1
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        load_vec_t r;
        {
            const int e = 0;
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            if (!(c1 < 4097 && c0 < 8191)) continue;
            r.v = *reinterpret_cast<const unsigned int*>(src + ((c0) * 4097LL + c1));
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(smem + (o ^ ((o & 992) >> 5))) = *reinterpret_cast<const unsigned int*>(&r.e[e]);
        }
    }
    __syncthreads();
    // phase 2: shared loads of 1, global stores of 1 along the store axis
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        store_vec_t w;
        {
            const int e = 0;
            const int f = t / 128 + k * 2;
            const int s = (t % 128) * 1 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            if (!(c1 < 4097 && c0 < 8191)) continue;
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = t / 128 + k * 2;
            const int s = (t % 128) * 1 + e;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(&w.e[e]) = *reinterpret_cast<const unsigned int*>(smem + (o ^ ((o & 992) >> 5)));
        }
        {
            const int e = 0;
            const int f = t / 128 + k * 2;
            const int s = (t % 128) * 1 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            *reinterpret_cast<unsigned int*>(dst + (c0 + (c1) * 8191LL)) = w.v;
        }
    }
    }
}

extern "C" __global__ void __launch_bounds__(256) laycert_segmented(
    const elem_t* __restrict__ src, elem_t* __restrict__ dst)
{
    __shared__ __align__(16) elem_t smem[4096];
    const int t = threadIdx.x;
    const long long bx = blockIdx.y, by = blockIdx.x, bz = blockIdx.z;
    // interior CTAs (every cell inside the tensor) run unguarded; the edge CTAs check each access
    if (bx < 128 && by < 63) {
    // phase 1: global loads of 1 along the first axis, shared stores of 1
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        load_vec_t r;
        {
            const int e = 0;
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            r.v = *reinterpret_cast<const unsigned int*>(src + ((c0) * 4097LL + c1));
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(smem + (o ^ ((o & 992) >> 5))) = *reinterpret_cast<const unsigned int*>(&r.e[e]);
        }
    }
    __syncthreads();
    // phase 2: shared loads of 1, global stores of 1 along the store axis
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        store_vec_t w;
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = t / 32 + (k / 4) * 8;
            const int s = (t % 32) + (k % 4) * 32 + e;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(&w.e[e]) = *reinterpret_cast<const unsigned int*>(smem + (o ^ ((o & 992) >> 5)));
        }
        {
            const int e = 0;
            const int f = t / 32 + (k / 4) * 8;
            const int s = (t % 32) + (k % 4) * 32 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            *reinterpret_cast<unsigned int*>(dst + (c0 + (c1) * 8191LL)) = w.v;
        }
    }
    } else {
    // phase 1: global loads of 1 along the first axis, shared stores of 1
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        load_vec_t r;
        {
            const int e = 0;
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            if (!(c1 < 4097 && c0 < 8191)) continue;
            r.v = *reinterpret_cast<const unsigned int*>(src + ((c0) * 4097LL + c1));
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = (t % 32) * 1 + e;
            const int s = t / 32 + k * 8;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(smem + (o ^ ((o & 992) >> 5))) = *reinterpret_cast<const unsigned int*>(&r.e[e]);
        }
    }
    __syncthreads();
    // phase 2: shared loads of 1, global stores of 1 along the store axis
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        store_vec_t w;
        {
            const int e = 0;
            const int f = t / 32 + (k / 4) * 8;
            const int s = (t % 32) + (k % 4) * 32 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            if (!(c1 < 4097 && c0 < 8191)) continue;
        }
#pragma unroll
        for (int e = 0; e < 1; e += 1) {
            const int f = t / 32 + (k / 4) * 8;
            const int s = (t % 32) + (k % 4) * 32 + e;
            const int o = f * 1 + s * 32;
            *reinterpret_cast<unsigned int*>(&w.e[e]) = *reinterpret_cast<const unsigned int*>(smem + (o ^ ((o & 992) >> 5)));
        }
        {
            const int e = 0;
            const int f = t / 32 + (k / 4) * 8;
            const int s = (t % 32) + (k % 4) * 32 + e;
            const long long c0 = by * 128 + s;
            const long long c1 = bx * 32 + f;
            *reinterpret_cast<unsigned int*>(dst + (c0 + (c1) * 8191LL)) = w.v;
        }
    }
    }
}

int main() {
  size_t n = (size_t)M * N;
  std::vector<unsigned> h(n), back(n);
  for (size_t i = 0; i < n; i++) h[i] = (unsigned)((i * 2654435761u) % 1000003) + 1u;
  unsigned *src, *dst, *cpy;
  cudaMalloc(&src, n * 4); cudaMalloc(&dst, n * 4); cudaMalloc(&cpy, n * 4);
  cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice);
  dim3 grid(64, 129);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](auto f) {
    for (int i = 0; i < 10; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 100; i++) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms); }
    std::sort(t.begin(), t.end()); return t[50];
  };
  const char* names[] = {"emitted", "segmented stores"};
  for (int round = 0; round < 4; round++) {
    for (int v = 0; v < 2; v++) {
      float d2d = time([&] { cudaMemcpy(cpy, src, n * 4, cudaMemcpyDeviceToDevice); });
      cudaMemset(dst, 0xff, n * 4);
      float ms = time([&] {
        if (v == 0) laycert_emitted<<<grid, 256>>>(src, dst);
        else laycert_segmented<<<grid, 256>>>(src, dst);
      });
      cudaError_t err = cudaGetLastError();
      cudaMemcpy(back.data(), dst, n * 4, cudaMemcpyDeviceToHost);
      size_t bad = 0;
      for (size_t m = 0; m < M; m++) for (size_t k = 0; k < N; k++) bad += back[k * M + m] != h[m * N + k];
      double gb = 2.0 * n * 4 / 1e9;
      printf("round %d %-18s %s, kernel %.1f GB/s, D2D %.1f GB/s, ratio %.1f%%\n", round, names[v],
             err ? cudaGetErrorString(err) : bad ? "WRONG" : "correct", gb / (ms / 1e3),
             gb / (d2d / 1e3), 100.0 * d2d / ms);
    }
  }
  return 0;
}
