// The mma.sync ceiling on this GPU (issue 24's sm80 path): one CTA per SM, each warp a 64x64
// accumulator tile of m16n8k16 bf16 mma.sync (32 per k-step, as the emitted sm80 kernel's warps),
// fragments in registers (LD=0) or 8 ldmatrix.x4 per k-step (LD=1), and SYNC>0 a cp.async
// wait + __syncthreads every SYNC k-steps (the emitted kernel's per-k-block barrier).
//   cd bench/gpu/experiments && nvcc -O3 -arch=sm_90a -o $OUT/ceil mma_ceiling.cu -lnvidia-ml && $OUT/ceil
// `$OUT/ceil sustain` (session 18): each configuration launched back to back for 3 s, with
// operands as the original run had them (small integers: mostly-zero bf16 bits) and as random
// bf16 of unit scale (what gemm.py feeds), NVML's SM clock and power read after every launch:
// the ceiling under the device's power cap.
#include <cstdio>
#include <cuda_runtime.h>
#include <nvml.h>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>
__device__ __forceinline__ void mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void ldsm(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// A random bf16 pair of unit scale (sign, exponent 126 or 127, random mantissa) from a hash.
__device__ __forceinline__ unsigned rnd_pair(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  const unsigned lo = (x & 0x807Fu) | ((126u + ((x >> 7) & 1u)) << 7);
  const unsigned y = x >> 16;
  const unsigned hi = (y & 0x807Fu) | ((126u + ((y >> 7) & 1u)) << 7);
  return lo | (hi << 16);
}
template <int LD, int SYNC>
__global__ void k(float* out, int iters, int random) {
  __shared__ __align__(128) unsigned char s[32768];
  float acc[128];
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  unsigned a[4][4], b[4][4];
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) {
    a[i][j] = random ? rnd_pair(threadIdx.x * 64 + i * 4 + j + 1) : threadIdx.x * 3 + i + j;
    b[i][j] = random ? rnd_pair(threadIdx.x * 64 + 16 + i * 4 + j + 1) : threadIdx.x + i * j;
  }
  if (random)
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) ((unsigned*)s)[i] = rnd_pair(i * 7919u + blockIdx.x);
  __syncthreads();
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
  k<LD, SYNC><<<sms, warps * 32>>>(o, iters, 0);
  cudaDeviceSynchronize();
  cudaEventRecord(e0);
  k<LD, SYNC><<<sms, warps * 32>>>(o, iters, 0);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  const double flops = 2.0 * 16 * 8 * 16 * 32 * (double)iters * warps * sms;
  printf("%-34s %2d warps/SM: %6.1f TFLOP/s (%s)\n", what, warps, flops / ms / 1e9,
         cudaGetErrorString(cudaGetLastError()));
}
// Back-to-back launches of about 20 ms for `secs` seconds; TFLOP/s of the first, median and
// last launch, and NVML's SM clock and power after each.
template <int LD, int SYNC>
void sustain(float* o, int sms, int warps, int random, nvmlDevice_t dev, const char* what) {
  const int iters = 2000;  // about 20 ms at 8 warps per SM
  const double flops = 2.0 * 16 * 8 * 16 * 32 * (double)iters * warps * sms;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> tf;
  std::vector<unsigned> mhz, mw;
  cudaEvent_t start;
  cudaEventCreate(&start);
  cudaEventRecord(start);
  for (;;) {
    cudaEventRecord(e0);
    k<LD, SYNC><<<sms, warps * 32>>>(o, iters, random);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms, total;
    cudaEventElapsedTime(&ms, e0, e1);
    tf.push_back(flops / ms / 1e9);
    unsigned c = 0, p = 0;
    nvmlDeviceGetClockInfo(dev, NVML_CLOCK_SM, &c);
    nvmlDeviceGetPowerUsage(dev, &p);
    mhz.push_back(c);
    mw.push_back(p);
    cudaEventElapsedTime(&total, start, e1);
    if (total > 3000.f) break;
  }
  std::vector<double> st = tf;
  std::sort(st.begin(), st.end());
  std::vector<unsigned> sc = mhz, sp = mw;
  std::sort(sc.begin(), sc.end());
  std::sort(sp.begin(), sp.end());
  printf("%-34s %s operands: TFLOP/s first %6.1f median %6.1f last %6.1f (%zu launches) | SM MHz "
         "first %u median %u min %u | W median %.0f max %.0f (%s)\n",
         what, random ? "random" : "small ", tf.front(), st[st.size() / 2], tf.back(), tf.size(), mhz.front(),
         sc[sc.size() / 2], sc.front(), sp[sp.size() / 2] / 1000.0, sp.back() / 1000.0,
         cudaGetErrorString(cudaGetLastError()));
  cudaDeviceSynchronize();
  struct timespec ts = {1, 0};
  nanosleep(&ts, nullptr);  // let the clocks recover between configurations
}
int main(int argc, char** argv) {
  float* o;
  cudaMalloc(&o, 4096);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (argc > 1 && !strcmp(argv[1], "sustain")) {
    nvmlInit();
    nvmlDevice_t dev;
    nvmlDeviceGetHandleByIndex(0, &dev);
    for (int r : {0, 1}) {
      sustain<0, 0>(o, sms, 8, r, dev, "registers only");
      sustain<1, 0>(o, sms, 8, r, dev, "ldmatrix, no barrier");
      sustain<1, 4>(o, sms, 8, r, dev, "ldmatrix, barrier every 4 k-steps");
    }
    return 0;
  }
  for (int w : {4, 8}) run<0, 0>(o, sms, w, "registers only");
  for (int w : {4, 8}) run<1, 0>(o, sms, w, "ldmatrix, no barrier");
  run<1, 2>(o, sms, 8, "ldmatrix, barrier every 2 k-steps");
  run<1, 4>(o, sms, 8, "ldmatrix, barrier every 4 k-steps");
  run<1, 8>(o, sms, 8, "ldmatrix, barrier every 8 k-steps");
}
