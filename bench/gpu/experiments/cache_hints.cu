// Experiment (issue 15, session 13): do cache hints recover the odd pitches' cost of the
// 8191x4097 f32 transpose? Same kernel as realign_stores.cu's variant A (laycert's default
// plan: tile 32 (along n) x 128 (along m), 256 threads, blockIdx.x along the destination's
// fast axis), with the global loads and stores spelled in PTX with the hints below. Every
// variant is checked element by element and timed (CUDA events, median of 100 after 10) next
// to a cudaMemcpy D2D of the same bytes, in interleaved rounds.
// nvcc -O3 -arch=sm_90a -o cache_hints cache_hints.cu && ./cache_hints
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

constexpr int M = 8191, N = 4097, TM = 128, TN = 32;

enum Hint {
  PLAIN,            // ld.global / st.global
  LOAD_CS,          // ld.global.cs (evict first), plain stores
  LOAD_256B,        // ld.global.L2::256B (fetch 256-byte blocks into L2), plain stores
  LOAD_NA_256B,     // ld.global.L1::no_allocate.L2::256B, plain stores
  LOAD_EF_POLICY,   // loads with an L2 evict_first policy, plain stores
  STORE_EL_POLICY,  // plain loads, stores with an L2 evict_last policy
  LOAD_EF_STORE_EL, // both policies
  LOAD_256B_STORE_EL,
  LOAD_LU,          // ld.global.lu (last use)
  LOAD_128B,        // ld.global.L2::128B
  LOAD_64B,         // ld.global.L2::64B
  PLAIN_CXX,        // C++ loads and stores (the compiler schedules them, as in laycert's kernel)
  HINTS
};
const char* names[HINTS] = {"plain", "ld.cs", "ld.L2::256B", "ld.L1::no_allocate.L2::256B",
                            "ld evict_first policy", "st evict_last policy",
                            "ld evict_first + st evict_last", "ld.L2::256B + st evict_last",
                            "ld.lu", "ld.L2::128B", "ld.L2::64B", "C++ loads and stores"};

template <int H>
__device__ __forceinline__ float load(const float* p, unsigned long long pol) {
  float v;
  if (H == LOAD_CS) asm volatile("ld.global.cs.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (H == LOAD_256B || H == LOAD_256B_STORE_EL)
    asm volatile("ld.global.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (H == LOAD_NA_256B)
    asm volatile("ld.global.L1::no_allocate.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (H == LOAD_EF_POLICY || H == LOAD_EF_STORE_EL)
    asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol));
  else if (H == LOAD_128B) asm volatile("ld.global.L2::128B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (H == LOAD_64B) asm volatile("ld.global.L2::64B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else if (H == PLAIN_CXX) v = *p;
  else if (H == LOAD_LU) asm volatile("ld.global.lu.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
template <int H>
__device__ __forceinline__ void store(float* p, float v, unsigned long long pol) {
  if (H == STORE_EL_POLICY || H == LOAD_EF_STORE_EL || H == LOAD_256B_STORE_EL)
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(pol) : "memory");
  else if (H == PLAIN_CXX) *p = v;
  else asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

template <int H>
__global__ void __launch_bounds__(256) transpose(const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ float tile[TN][TM + 1];
  unsigned long long ef, el;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(ef));
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(el));
  int m0 = blockIdx.x * TM, n0 = blockIdx.y * TN;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // All 16 loads of a thread are issued before the first shared store (laycert's kernel
  // gets the same from the compiler; asm volatile would otherwise serialize them).
  float v[TM / 8];
#pragma unroll
  for (int i = 0; i < TM / 8; ++i) {
    int m = m0 + warp + 8 * i, n = n0 + lane;
    if (m < M && n < N) v[i] = load<H>(src + (long)m * N + n, ef);
  }
#pragma unroll
  for (int i = 0; i < TM / 8; ++i) tile[lane][warp + 8 * i] = v[i];
  __syncthreads();
  for (int c = warp; c < TN; c += 8) {
    int n = n0 + c;
    if (n >= N) continue;
    long start = (long)n * M + m0;
    int len = min(TM, M - m0);
    for (int k = lane; k < len; k += 32) store<H>(dst + start + k, tile[c][k], el);
  }
}

template <int H>
void launch(dim3 grid, const float* s, float* d) { transpose<H><<<grid, 256>>>(s, d); }
typedef void (*Launch)(dim3, const float*, float*);
Launch launches[HINTS] = {launch<0>, launch<1>, launch<2>, launch<3>, launch<4>,
                          launch<5>, launch<6>, launch<7>, launch<8>, launch<9>, launch<10>, launch<11>};

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
  for (int round = 0; round < 3; round++) {
    for (int v = 0; v < HINTS; v++) {
      float d2d = time([&] { cudaMemcpy(cpy, src, n * 4, cudaMemcpyDeviceToDevice); });
      cudaMemset(dst, 0xff, n * 4);
      float ms = time([&] { launches[v](grid, src, dst); });
      cudaError_t err = cudaGetLastError();
      cudaMemcpy(back.data(), dst, n * 4, cudaMemcpyDeviceToHost);
      size_t bad = 0;
      for (size_t m = 0; m < M; m++) for (size_t k = 0; k < N; k++) bad += back[k * M + m] != h[m * N + k];
      double gb = 2.0 * n * 4 / 1e9;
      printf("round %d %-32s %s, kernel %.1f GB/s, D2D %.1f GB/s, ratio %.1f%%\n", round,
             names[v], err ? cudaGetErrorString(err) : bad ? "WRONG" : "correct",
             gb / (ms / 1e3), gb / (d2d / 1e3), 100.0 * d2d / ms);
    }
  }
  return 0;
}
