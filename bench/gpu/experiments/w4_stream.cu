// Experiment (issue 24, session 14): how fast can the W4A16 kernel's WEIGHT STREAM go on its own?
// The int4 weights of N = K = 8192 (32 MiB) read with exactly the emitted kernel's pattern and
// grid (512 CTAs of 128 threads: column tile = CTA / 8, split = CTA % 8; warp w, vector j reads
// the 512 contiguous bytes of row group tile * 16 + w + 4 j, superblock split * 8 + s, one 16-byte
// load per lane, ld.global.nc.L1::no_allocate), with no arithmetic but an XOR of the words, and
// DEPTH superblocks in flight per thread (the emitted kernel keeps 1-2: LC_W_DEPTH 2).
// Each is timed (CUDA events, median of 50) after two kinds of L2 flush:
//   dirty: a 256 MiB memset, as bench/gpu/w4a16.py's "cold" (the L2 is left full of DIRTY lines,
//          so every line the kernel brings in first writes one back: 2x the DRAM traffic);
//   clean: a 256 MiB read (the L2 is left full of clean lines of another buffer).
// and hot (no flush). A 32 MiB D2D copy and a 32 MiB read-only kernel at full occupancy are the
// device's references.
// nvcc -O3 -arch=sm_90a -o w4_stream w4_stream.cu && ./w4_stream
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

struct __align__(16) v4 { unsigned x, y, z, w; };
__device__ __forceinline__ v4 ldg_stream(const unsigned* p) {
    v4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// The emitted kernel's pattern: 8 superblocks per warp, 4 vectors each.
template <int DEPTH>
__global__ void __launch_bounds__(128, 4) stream_w(const unsigned* __restrict__ W, unsigned* __restrict__ out) {
    const int t = threadIdx.x, lane = t % 32, w = t / 32;
    const int tile = blockIdx.x / 8, split = blockIdx.x % 8;
    const unsigned* p[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) p[j] = W + (size_t)(tile * 16 + w + 4 * j) * 8192 + (size_t)split * 8 * 128 + lane * 4;
    unsigned acc = 0;
    v4 buf[DEPTH][4];
#pragma unroll
    for (int s = 0; s < DEPTH - 1; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) buf[s][j] = ldg_stream(p[j] + s * 128);
#pragma unroll
    for (int s = 0; s < 8; ++s) {
        if (s + DEPTH - 1 < 8)
#pragma unroll
            for (int j = 0; j < 4; ++j) buf[(s + DEPTH - 1) % DEPTH][j] = ldg_stream(p[j] + (s + DEPTH - 1) * 128);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const v4 v = buf[s % DEPTH][j];
            acc ^= v.x ^ (v.y << 1) ^ (v.z << 2) ^ (v.w << 3);
        }
    }
    out[blockIdx.x * 128 + t] = acc;
}

// Device reference: a grid-stride read of the same bytes at full occupancy, 4 vectors per step.
__global__ void __launch_bounds__(256) read_all(const v4* __restrict__ W, size_t n, unsigned* __restrict__ out) {
    unsigned acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        v4 a = W[i], b = W[i + stride], c = W[i + 2 * stride], d = W[i + 3 * stride];
        acc ^= a.x ^ b.y ^ c.z ^ d.w ^ a.w ^ b.z ^ c.y ^ d.x;
    }
    for (; i < n; i += stride) acc ^= W[i].x;
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
__global__ void touch(const v4* __restrict__ p, size_t n, unsigned* __restrict__ out) {
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) acc ^= p[i].x;
    if (acc == 0x12345678u) out[0] = acc;
}

int main() {
    const size_t wbytes = 32u << 20, fbytes = 256u << 20;
    unsigned *W, *out, *dst;
    unsigned char *flush;
    CK(cudaMalloc(&W, wbytes));
    CK(cudaMalloc(&dst, wbytes));
    CK(cudaMalloc(&out, 1 << 22));
    CK(cudaMalloc(&flush, fbytes));
    CK(cudaMemset(W, 0x5A, wbytes));
    CK(cudaMemset(flush, 1, fbytes));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    auto time = [&](auto launch, int mode) {  // mode 0 hot, 1 dirty flush, 2 clean flush
        std::vector<float> ts;
        for (int r = 0; r < 60; ++r) {
            if (mode == 1) cudaMemsetAsync(flush, r & 0xFF, fbytes);
            if (mode == 2) touch<<<132 * 8, 256>>>((const v4*)flush, fbytes / 16, out);
            cudaEventRecord(a);
            launch();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r >= 10) ts.push_back(ms * 1000.f);
        }
        std::sort(ts.begin(), ts.end());
        return ts[ts.size() / 2];
    };
    auto row = [&](const char* name, auto launch, double bytes) {
        float h = time(launch, 0), d = time(launch, 1), c = time(launch, 2);
        printf("%-44s hot %6.1f us (%5.0f GB/s)  dirty %6.1f us (%5.0f GB/s)  clean %6.1f us (%5.0f GB/s)\n", name, h,
               bytes / h / 1e3, d, bytes / d / 1e3, c, bytes / c / 1e3);
    };
    row("emitted pattern, depth 1 (load, then use)", [&] { stream_w<1><<<512, 128>>>(W, out); }, wbytes);
    row("emitted pattern, depth 2 (LC_W_DEPTH 2)", [&] { stream_w<2><<<512, 128>>>(W, out); }, wbytes);
    row("emitted pattern, depth 3", [&] { stream_w<3><<<512, 128>>>(W, out); }, wbytes);
    row("emitted pattern, depth 4", [&] { stream_w<4><<<512, 128>>>(W, out); }, wbytes);
    row("emitted pattern, depth 8 (all at once)", [&] { stream_w<8><<<512, 128>>>(W, out); }, wbytes);
    row("grid-stride read, 132 x 8 CTAs of 256", [&] { read_all<<<132 * 8, 256>>>((const v4*)W, wbytes / 16, out); }, wbytes);
    row("cudaMemcpy D2D 32 MiB (bytes read)", [&] { cudaMemcpyAsync(dst, W, wbytes, cudaMemcpyDeviceToDevice); }, wbytes);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return 0;
}
