// Experiment (issue 15): does realigning the store stage per column recover the misaligned-store
// cost of an odd destination pitch? Transpose of a (M=8191, N=4097) f32 tensor, source
// row-major (pitch N), destination column-major (pitch M), tile 32 (along n) x 128 (along m),
// 256 threads, as laycert's default plan. Variant A stores each column's 128-element run from
// its first element (misaligned runs, as laycert's kernel); variant B stores it in 128-byte
// aligned windows (5 masked warp stores per run instead of 4). Both checked element by element,
// timed with CUDA events (median of 100) next to a cudaMemcpy D2D of the same bytes.
// nvcc -O3 -arch=sm_90a -o realign realign_stores.cu && ./realign
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

constexpr int M = 8191, N = 4097, TM = 128, TN = 32;

// HINT: 0 plain, 1 streaming loads and stores (__ldcs/__stcs), 2 read-only loads (__ldg) and
// streaming stores, 3 plain loads and streaming stores.
template <bool REALIGN, int HINT = 0>
__global__ void __launch_bounds__(256) transpose(const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ float tile[TN][TM + 1];
  int m0 = blockIdx.x * TM, n0 = blockIdx.y * TN;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // load: rows m of the source, 32 consecutive n per warp
  for (int r = warp; r < TM; r += 8) {
    int m = m0 + r, n = n0 + lane;
    if (m < M && n < N) {
      const float* p = src + (long)m * N + n;
      tile[lane][r] = HINT == 1 ? __ldcs(p) : HINT == 2 ? __ldg(p) : *p;
    }
  }
  __syncthreads();
  for (int c = warp; c < TN; c += 8) {
    int n = n0 + c;
    if (n >= N) continue;
    long start = (long)n * M + m0;
    int len = min(TM, M - m0);
    if (!REALIGN) {
      for (int k = lane; k < len; k += 32) {
        if (HINT == 0) dst[start + k] = tile[c][k];
        else __stcs(dst + start + k, tile[c][k]);
      }
    } else {
      long base = start & ~31L;
      for (long a = base + lane; a < start + len; a += 32) {
        if (a >= start) dst[a] = tile[c][a - start];
      }
    }
  }
}

int main() {
  size_t n = (size_t)M * N;
  std::vector<float> h(n), back(n);
  for (size_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000003) + 1.0f;
  float *src, *dst, *cpy;
  cudaMalloc(&src, n * 4); cudaMalloc(&dst, n * 4); cudaMalloc(&cpy, n * 4);
  cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice);
  dim3 grid((M + TM - 1) / TM, (N + TN - 1) / TN);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](auto f) {
    for (int i = 0; i < 10; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 100; i++) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms); }
    std::sort(t.begin(), t.end()); return t[50];
  };
  const char* names[] = {"misaligned stores", "realigned stores", "streaming loads+stores",
                         "ldg loads, streaming stores", "plain loads, streaming stores"};
  for (int round = 0; round < 3; round++) {
    float d2d = time([&] { cudaMemcpy(cpy, src, n * 4, cudaMemcpyDeviceToDevice); });
    for (int v = 0; v < 5; v++) {
      cudaMemset(dst, 0xff, n * 4);
      float ms = time([&] {
        switch (v) {
          case 0: transpose<false, 0><<<grid, 256>>>(src, dst); break;
          case 1: transpose<true, 0><<<grid, 256>>>(src, dst); break;
          case 2: transpose<false, 1><<<grid, 256>>>(src, dst); break;
          case 3: transpose<false, 2><<<grid, 256>>>(src, dst); break;
          default: transpose<false, 3><<<grid, 256>>>(src, dst); break;
        }
      });
      cudaMemcpy(back.data(), dst, n * 4, cudaMemcpyDeviceToHost);
      size_t bad = 0;
      for (size_t m = 0; m < M; m++) for (size_t k = 0; k < N; k++) bad += back[k * M + m] != h[m * N + k];
      double gb = 2.0 * n * 4 / 1e9;
      printf("round %d %s: %s, kernel %.1f GB/s, D2D %.1f GB/s, ratio %.1f%%\n", round,
             names[v], bad ? "WRONG" : "correct",
             gb / (ms / 1e3), gb / (d2d / 1e3), 100.0 * d2d / ms);
    }
  }
  return 0;
}
