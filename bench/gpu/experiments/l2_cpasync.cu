// Experiment (issue 24, session 14): the L2 -> shared-memory bandwidth that a cp.async GEMM
// mainloop can draw on the H200, with no arithmetic. The sm80 path's 128x256x64 bf16 tile needs
// (128 + 256) * 64 * 2 = 48 KiB per k-block for 2 * 128 * 256 * 64 flops, 0.01172 bytes per flop:
// 500 TFLOP/s needs 5.86 TB/s from L2 into the SMs. Each CTA here streams k-blocks of the same
// shape (rows of 128 bytes, pitch 16 KiB as in an 8192-wide bf16 matrix) into a ring of shared
// stages exactly as the emitted kernel does (16-byte cp.async.cg, commit, wait_group<STAGES-2>,
// __syncthreads), from a 16 MiB working set that stays in L2. Reported: TB/s, and the TFLOP/s that
// a 128x256 (and a 192x256 / 256x256) tile could reach at that bandwidth.
// nvcc -O3 -arch=sm_90a -o l2_cpasync l2_cpasync.cu && ./l2_cpasync
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__device__ __forceinline__ void cp16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

constexpr int PITCH = 16384;   // bytes per matrix row
constexpr int KSPAN = 4096;    // bytes of k cycled through (so 2048 rows x 4 KiB = 8 MiB per operand)

// ROWS rows of 128 bytes per k-block (BM + BN), THREADS threads, STAGES deep; BARRIER: the
// emitted kernel's __syncthreads per k-block.
template <int ROWS, int THREADS, int STAGES, bool BARRIER>
__global__ void __launch_bounds__(THREADS) stream(const unsigned char* __restrict__ src, int kblocks, unsigned* out) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    constexpr int CHUNKS = ROWS * 8 / THREADS;  // 16-byte chunks per thread per k-block
    const int t = threadIdx.x;
    // this CTA's rows: a block of ROWS rows of the 2048-row working set
    const int row0 = (blockIdx.x * ROWS) % (2048 - ROWS + 1);
    auto load = [&](int kb, int stage) {
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            const int c = t + j * THREADS;
            const int r = c / 8, k16 = c % 8;
            const unsigned char* p = src + (size_t)(row0 + r) * PITCH + (kb * 128) % KSPAN + k16 * 16;
            cp16(base + stage * ROWS * 128 + (unsigned)(r * 128 + ((k16 ^ (r % 8)) * 16)), p);
        }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        load(s, s);
        commit();
    }
    unsigned acc = 0;
    for (int kb = 0; kb < kblocks; ++kb) {
        wait_group<STAGES - 2>();
        if (BARRIER) __syncthreads();
        const int nk = kb + STAGES - 1;
        load(nk, nk % STAGES);
        commit();
        if (kb % 64 == 0) {  // touch the stage so the copies are not dead
            unsigned v;
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(base + (kb % STAGES) * ROWS * 128 + t * 4));
            acc ^= v;
        }
    }
    wait_group<0>();
    out[blockIdx.x * THREADS + t] = acc;
}

int main() {
    unsigned char* src;
    unsigned* out;
    const size_t bytes = (size_t)2048 * PITCH;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMalloc(&out, 1 << 24));
    CK(cudaMemset(src, 3, bytes));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device %s, %d SMs, L2 %d MiB\n", prop.name, sms, prop.l2CacheSize >> 20);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    auto run = [&](const char* name, auto kernel, int rows, int threads, int stages, int ctas_per_sm, double flop_per_byte) {
        const int smem = stages * rows * 128;
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        const int grid = sms * ctas_per_sm, kblocks = 3000;
        std::vector<float> ts;
        for (int r = 0; r < 7; ++r) {
            cudaEventRecord(a);
            kernel<<<grid, threads, smem>>>(src, kblocks, out);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r >= 2) ts.push_back(ms);
        }
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) { printf("%s: %s\n", name, cudaGetErrorString(e)); return; }
        std::sort(ts.begin(), ts.end());
        const double tbs = (double)grid * kblocks * rows * 128 / (ts[ts.size() / 2] * 1e-3) / 1e12;
        printf("%-58s %6.2f TB/s  -> %5.0f TFLOP/s at this tile's %.1f flop/byte\n", name, tbs, tbs * flop_per_byte, flop_per_byte);
    };
    // flop per byte of a BMxBN tile with bk 64 bf16: 2*BM*BN*64 / ((BM+BN)*128)
    auto fpb = [](double bm, double bn) { return 2 * bm * bn * 64 / ((bm + bn) * 128); };
    run("128x256 tile: 384 rows, 256 thr, 4 stages, barrier (emitted)", stream<384, 256, 4, true>, 384, 256, 4, 1, fpb(128, 256));
    run("128x256 tile: 384 rows, 256 thr, 4 stages, no barrier", stream<384, 256, 4, false>, 384, 256, 4, 1, fpb(128, 256));
    run("128x256 tile: 384 rows, 384 thr, 4 stages, barrier", stream<384, 384, 4, true>, 384, 384, 4, 1, fpb(128, 256));
    run("128x128 tile x2 CTAs/SM: 256 rows, 128 thr, 4 stages", stream<256, 128, 4, true>, 256, 128, 4, 2, fpb(128, 128));
    run("192x256 tile: 448 rows, 256 thr, 3 stages, barrier", stream<448, 256, 3, true>, 448, 256, 3, 1, fpb(192, 256));
    run("256x256 tile: 512 rows, 256 thr, 3 stages, barrier", stream<512, 256, 3, true>, 512, 256, 3, 1, fpb(256, 256));
    CK(cudaDeviceSynchronize());
    return 0;
}
