// The mma.sync ceiling on this GPU (issue 24's sm80 path): one CTA per SM, each warp a 64x64
// accumulator tile of m16n8k16 bf16 mma.sync (32 per k-step, as the emitted sm80 kernel's warps),
// fragments in registers (LD=0) or 8 ldmatrix.x4 per k-step (LD=1), and SYNC>0 a cp.async
// wait + __syncthreads every SYNC k-steps (the emitted kernel's per-k-block barrier).
//   cd bench/gpu/experiments && nvcc -O3 -arch=sm_90a -o $OUT/ceil mma_ceiling.cu && $OUT/ceil
#include <cstdio>
#include <cuda_runtime.h>
__device__ __forceinline__ void mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void ldsm(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
template <int LD, int SYNC>
__global__ void k(float* out, int iters) {
  __shared__ __align__(128) unsigned char s[32768];
  float acc[128];
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  unsigned a[4][4], b[4][4];
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) { a[i][j] = threadIdx.x * 3 + i + j; b[i][j] = threadIdx.x + i * j; }
  unsigned base = (unsigned)__cvta_generic_to_shared(s) + (threadIdx.x % 32) * 16 + (threadIdx.x / 32) * 1024 % 16384;
  for (int it = 0; it < iters; ++it) {
    if (SYNC && it % SYNC == 0) {
      asm volatile("cp.async.wait_group 2;" ::: "memory");
      __syncthreads();
    }
    if (LD) {
#pragma unroll
      for (int i = 0; i < 4; ++i) { ldsm(a[i], base + i * 2048); ldsm(b[i], base + 8192 + i * 2048); }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) mma(acc + (i * 8 + j) * 4, a[i], b[j / 2] + (j % 2) * 2);
  }
  float s2 = 0; for (int i = 0; i < 128; ++i) s2 += acc[i];
  if (s2 == 1.2345f) out[threadIdx.x] = s2;
}
template <int LD, int SYNC>
void run(float* o, int sms, int warps, const char* what) {
  const int iters = 20000;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  k<LD, SYNC><<<sms, warps * 32>>>(o, iters);
  cudaDeviceSynchronize();
  cudaEventRecord(e0);
  k<LD, SYNC><<<sms, warps * 32>>>(o, iters);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  const double flops = 2.0 * 16 * 8 * 16 * 32 * (double)iters * warps * sms;
  printf("%-34s %2d warps/SM: %6.1f TFLOP/s (%s)\n", what, warps, flops / ms / 1e9,
         cudaGetErrorString(cudaGetLastError()));
}
int main() {
  float* o;
  cudaMalloc(&o, 4096);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int w : {4, 8}) run<0, 0>(o, sms, w, "registers only");
  for (int w : {4, 8}) run<1, 0>(o, sms, w, "ldmatrix, no barrier");
  run<1, 2>(o, sms, 8, "ldmatrix, barrier every 2 k-steps");
  run<1, 4>(o, sms, 8, "ldmatrix, barrier every 4 k-steps");
  run<1, 8>(o, sms, 8, "ldmatrix, barrier every 8 k-steps");
}
