// Experiment (issue 15): 16-byte accesses for a transpose whose pitches are both odd. The source
// (M=8191 rows, N=4097 columns, f32, row-major) and the destination (column-major, pitch M) are
// each one contiguous array, so a row's run can be read, and a column's run written, with
// 16-byte vectors aligned to the ARRAY (not to the row): at most one partial vector at each end
// of a run, whose in-tile elements go out one by one. Tile 128 (m) x 32 (n), 256 threads, as
// laycert's plan. The shared tile keeps each column shifted by its destination misalignment,
// so the store side reads aligned 16-byte vectors from shared memory.
// Variants: 0 = scalar (laycert's kernel, for the same-run comparison), 1 = vector loads and
// stores, 2 = vector loads, scalar stores, 3 = scalar loads, vector stores, 4-6 = the scalar
// kernel as a persistent grid of 4, 8 or 16 CTAs per SM looping over the tiles.
// Every element checked; median of 100 CUDA-event timed runs next to a D2D copy of the bytes.
//   cd bench/gpu/experiments && nvcc -O3 -arch=sm_90a -o $OUT/fv flat_vectors.cu && $OUT/fv
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

constexpr int M = 8191, N = 4097, TM = 128, TN = 32;
constexpr int RS = TM + 4 + 4;  // shared row stride (floats): 128 values + a shift of 0..3, 16 B rows
constexpr long TOTAL = (long)M * N;

template <bool VLOAD, bool VSTORE>
__global__ void __launch_bounds__(256) transpose(const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ __align__(16) float tile[TN * RS];
  const int m0 = blockIdx.x * TM, n0 = blockIdx.y * TN;
  const int tid = threadIdx.x;
  const int rows = min(TM, M - m0), cols = min(TN, N - n0);
  // column c of the tile starts at position sh(c) of its shared row: the destination's
  // misalignment of (n0 + c) * M + m0 (in floats, mod 4)
  auto sh = [&](int c) { return (int)(((long)(n0 + c) * M + m0) & 3); };
  if (VLOAD) {
    // row r's run: flat [s, s + cols), s = (m0 + r) * N + n0; vectors a0 .. a1 (at most 9)
    for (int item = tid; item < TM * 9; item += 256) {
      const int r = item / 9, q = item % 9;
      if (r >= rows) continue;
      const long s = (long)(m0 + r) * N + n0;
      const long a = (s >> 2) + q;
      if (a * 4 >= s + cols) continue;
      float v[4];
      if (a * 4 + 3 < TOTAL) {
        const float4 x = __ldg(reinterpret_cast<const float4*>(src) + a);
        v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
      } else {
        for (int e = 0; e < 4; e++) v[e] = a * 4 + e < TOTAL ? src[a * 4 + e] : 0.0f;
      }
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const long f = a * 4 + e;
        if (f >= s && f < s + cols) {
          const int c = (int)(f - s);
          tile[c * RS + sh(c) + r] = v[e];
        }
      }
    }
  } else {
    const int lane = tid & 31, warp = tid >> 5;
    for (int r = warp; r < rows; r += 8)
      if (lane < cols) tile[lane * RS + sh(lane) + r] = src[(long)(m0 + r) * N + n0 + lane];
  }
  __syncthreads();
  if (VSTORE) {
    // column c's run: flat [d, d + rows), d = (n0 + c) * M + m0; vectors b0 .. b1 (at most 33);
    // shared position of flat g: g - 4 * b0
    for (int item = tid; item < TN * 33; item += 256) {
      const int c = item / 33, q = item % 33;
      if (c >= cols) continue;
      const long d = (long)(n0 + c) * M + m0;
      const long b = (d >> 2) + q;
      if (b * 4 >= d + rows) continue;
      const float4 x = *reinterpret_cast<const float4*>(&tile[c * RS + 4 * q]);
      if (b * 4 >= d && b * 4 + 3 < d + rows) {
        reinterpret_cast<float4*>(dst)[b] = x;
      } else {
        const float v[4] = {x.x, x.y, x.z, x.w};
        for (int e = 0; e < 4; e++) {
          const long g = b * 4 + e;
          if (g >= d && g < d + rows) dst[g] = v[e];
        }
      }
    }
  } else {
    const int lane = tid & 31, warp = tid >> 5;
    for (int c = warp; c < cols; c += 8) {
      const long d = (long)(n0 + c) * M + m0;
      for (int k = lane; k < rows; k += 32) dst[d + k] = tile[c * RS + sh(c) + k];
    }
  }
}

// Variant 4: the scalar kernel as a persistent grid (CTAs = SMs x resident CTAs per SM), each
// CTA looping over tiles in the launch order of the ordinary grid (blockIdx.x fastest).
__global__ void __launch_bounds__(256) transpose_persistent(const float* __restrict__ src, float* __restrict__ dst, int tiles_m, int tiles) {
  __shared__ __align__(16) float tile[TN * RS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int b = blockIdx.x; b < tiles; b += gridDim.x) {
    const int m0 = (b % tiles_m) * TM, n0 = (b / tiles_m) * TN;
    const int rows = min(TM, M - m0), cols = min(TN, N - n0);
    auto sh = [&](int c) { return (int)(((long)(n0 + c) * M + m0) & 3); };
    for (int r = warp; r < rows; r += 8)
      if (lane < cols) tile[lane * RS + sh(lane) + r] = src[(long)(m0 + r) * N + n0 + lane];
    __syncthreads();
    for (int c = warp; c < cols; c += 8) {
      const long d = (long)(n0 + c) * M + m0;
      for (int k = lane; k < rows; k += 32) dst[d + k] = tile[c * RS + sh(c) + k];
    }
    __syncthreads();
  }
}

int main() {
  const size_t n = (size_t)TOTAL;
  std::vector<float> h(n), back(n);
  for (size_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000003) + 1.0f;
  float *src, *dst, *cpy;
  cudaMalloc(&src, n * 4);
  cudaMalloc(&dst, n * 4);
  cudaMalloc(&cpy, n * 4);
  cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice);
  const dim3 grid((M + TM - 1) / TM, (N + TN - 1) / TN);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto time = [&](auto f) {
    for (int i = 0; i < 10; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 100; i++) {
      cudaEventRecord(e0);
      f();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[50];
  };
  const char* names[] = {"scalar (laycert's)", "vector loads+stores", "vector loads", "vector stores",
                         "scalar, persistent x4", "scalar, persistent x8", "scalar, persistent x16"};
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int tiles_m = (M + TM - 1) / TM, tiles = tiles_m * ((N + TN - 1) / TN);
  for (int round = 0; round < 3; round++) {
    const float d2d = time([&] { cudaMemcpy(cpy, src, n * 4, cudaMemcpyDeviceToDevice); });
    for (int v = 0; v < 7; v++) {
      cudaMemset(dst, 0xff, n * 4);
      const float ms = time([&] {
        switch (v) {
          case 0: transpose<false, false><<<grid, 256>>>(src, dst); break;
          case 1: transpose<true, true><<<grid, 256>>>(src, dst); break;
          case 2: transpose<true, false><<<grid, 256>>>(src, dst); break;
          case 3: transpose<false, true><<<grid, 256>>>(src, dst); break;
          case 4: transpose_persistent<<<sms * 4, 256>>>(src, dst, tiles_m, tiles); break;
          case 5: transpose_persistent<<<sms * 8, 256>>>(src, dst, tiles_m, tiles); break;
          default: transpose_persistent<<<sms * 16, 256>>>(src, dst, tiles_m, tiles); break;
        }
      });
      cudaMemcpy(back.data(), dst, n * 4, cudaMemcpyDeviceToHost);
      size_t bad = 0;
      for (size_t m = 0; m < M; m++)
        for (size_t k = 0; k < N; k++) bad += back[k * M + m] != h[m * N + k];
      const double gb = 2.0 * n * 4 / 1e9;
      printf("round %d %-22s: %s, kernel %.1f GB/s, D2D %.1f GB/s, ratio %.1f%% (%s)\n", round,
             names[v], bad ? "WRONG" : "correct", gb / (ms / 1e3), gb / (d2d / 1e3),
             100.0 * d2d / ms, cudaGetErrorString(cudaGetLastError()));
    }
  }
  return 0;
}
