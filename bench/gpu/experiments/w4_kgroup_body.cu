// ---------------------------------------------------------------------------------------------
// Experiment (issue 24, session 16): W4A16 without split-K across CTAs. w4_kgroup.py splices
// this after an emitted W4A16 kernel's helpers (everything before "A cluster-wide barrier"),
// so the plan's macros, swizzle, dequantization and LC_W4_SCHEDULE are the emitted ones.
//
// CTA = KG_WN column warps x KG_WK K-warps. The emitted plan's CTA (LC_BN columns, a warp per
// 32 columns, thread index tc) is split over LC_BN / (32 KG_WN) CTAs: this CTA's column warps
// are plan warps half * KG_WN .. + KG_WN - 1. Every K-warp takes K / KG_WK of K (the whole K
// is in the CTA: no workspace, no counter, no second pass). The KG_WN warps of one K-warp
// index (a K-group) share their A superblocks: a ring of KG_SLOTS superblocks in shared memory
// in the plan's a_s layout, filled by the group's own cp.async KG_SLOTS - 1 superblocks ahead,
// one named barrier per superblock per group. At the end the K-warps' f32 partials meet in
// shared memory and are summed in K order (deterministic) and stored as f16.
// ---------------------------------------------------------------------------------------------
#ifndef KG_WN
#define KG_WN 2
#endif
#ifndef KG_WK
#define KG_WK 8
#endif
#ifndef KG_SLOTS
#define KG_SLOTS 3
#endif
#ifndef KG_APERM
#define KG_APERM 0
#endif
#define KG_THREADS (32 * KG_WN * KG_WK)
#define KG_GROUP (32 * KG_WN)
#define KG_HALVES (LC_BN / KG_GROUP)
#define KG_KW (LC_K / KG_WK)
#define KG_SBW (KG_KW / 128)
#define KG_GRID (LC_N / LC_BN * KG_HALVES)
#define KG_RING_BYTES (KG_WK * KG_SLOTS * LC_A_SB_BYTES)
#define KG_RED_BYTES (KG_WK * KG_GROUP * LC_ACC * 4)
#define KG_SMEM ((KG_RING_BYTES > KG_RED_BYTES ? KG_RING_BYTES : KG_RED_BYTES) + 1024)
#define KG_MIN_CTAS (512 / KG_THREADS)
static_assert(LC_K % (KG_WK * 128) == 0, "whole superblocks per K-warp");
static_assert(LC_BN % KG_GROUP == 0, "column warps split the plan's CTA");
static_assert(KG_SLOTS >= 2, "a ring");

__device__ __forceinline__ void kg_bar(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

extern "C" __global__ void __launch_bounds__(KG_THREADS, KG_MIN_CTAS)
    laycert_w4a16(const lc_elem* __restrict__ A, const unsigned* __restrict__ W,
                  const lc_elem* __restrict__ S, lc_elem* __restrict__ C, float* __restrict__ ws,
                  unsigned* __restrict__ counters) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const int t = threadIdx.x;
    const int warp = t / 32;
    const int kw = warp / KG_WN;
    const int p = t % KG_GROUP;  // this thread in its K-group
    const int tile = blockIdx.x / KG_HALVES;
    const int half = blockIdx.x % KG_HALVES;
    const int tc = half * KG_GROUP + p;  // the thread of the emitted plan's CTA
    const int n0 = tile * LC_BN;
    const int k0 = kw * KG_KW;
    const unsigned ring = base + (unsigned)(kw * KG_SLOTS) * LC_A_SB_BYTES;

    const lc_wptr wp = lc_w_bases(W, S, n0, k0, tc);
    lc_v4 wb[LC_W_DEPTH][LC_WV];
    unsigned sb_s[LC_W_DEPTH][LC_WV];
#pragma unroll
    for (int i = 0; i + 1 < LC_W_DEPTH; ++i)
        if (i < KG_SBW) lc_load_w(wp, wb[i], sb_s[i], k0, i);

    // Rows >= M of every slot: zero once (the ring only ever copies rows < M).
    if (LC_M < 16) {
        for (int c = p; c < KG_SLOTS * 256; c += KG_GROUP) {
            const int r = c % 256 / 16, k = c % 16 * 8;
            if (r >= LC_M)
                lc_st_shared_v4(ring + (unsigned)(c / 256) * LC_A_SB_BYTES + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)),
                                lc_v4{0u, 0u, 0u, 0u});
        }
    }
#if LC_DQ_PAIRS && !KG_APERM
    // A in the mma's k order (LC_DQ_PAIRS): a thread copies chunk pairs (k, k + 16) of a row and,
    // once they land, interleaves them in place (as lc_a_interleave), before the group barrier.
    auto stage = [&](int sb) {
        if (sb < KG_SBW) {
            const unsigned slot = ring + (unsigned)(sb % KG_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int x0 = 0; x0 < LC_M * 8; x0 += KG_GROUP) {
                const int x = x0 + p;
                if (x < LC_M * 8) {
                    const int r = LC_A_PR_ROW(x), k = LC_A_PR_K(x);
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        lc_cp_async16(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k + 16 * h)),
                                      A + LC_A_GOFF((long long)r, (long long)(k0 + sb * 128 + k + 16 * h)), 16u);
                }
            }
        }
        lc_cp_commit();
    };
    auto interleave = [&](int sb) {
        const unsigned slot = ring + (unsigned)(sb % KG_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
        for (int x0 = 0; x0 < LC_M * 8; x0 += KG_GROUP) {
            const int x = x0 + p;
            if (x < LC_M * 8) {
                const int r = LC_A_PR_ROW(x), k = LC_A_PR_K(x);
                const unsigned a0 = slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
                const unsigned a1 = slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k + 16));
                const lc_v4 lo = lc_ld_shared_v4(a0), hi = lc_ld_shared_v4(a1);
                lc_st_shared_v4(a0, lc_a_prmt(lo, hi, LC_A_PRMT_LO));
                lc_st_shared_v4(a1, lc_a_prmt(lo, hi, LC_A_PRMT_HI));
            }
        }
    };
#else
    auto stage = [&](int sb) {
        if (sb < KG_SBW) {
            const unsigned slot = ring + (unsigned)(sb % KG_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int c0 = 0; c0 < LC_M * 16; c0 += KG_GROUP) {
                const int c = c0 + p;
                if (c < LC_M * 16) {
                    const int r = c / 16, k = c % 16 * 8;
                    lc_cp_async16(slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)),
                                  A + LC_A_GOFF((long long)r, (long long)(k0 + sb * 128 + k)), 16u);
                }
            }
        }
        lc_cp_commit();
    };
    auto interleave = [&](int) {};
#endif
#pragma unroll
    for (int s = 0; s + 1 < KG_SLOTS; ++s) stage(s);

    unsigned a_lo[LC_A_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g)
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_LDSM_ROW(tc, g), LC_A_LDSM_K(tc, g)));
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    if (LC_M < 16) __syncthreads();  // the zero rows

#pragma unroll 1
    for (int sb0 = 0; sb0 < KG_SBW; sb0 += LC_W_DEPTH) {
#pragma unroll
        for (int i = 0; i < LC_W_DEPTH; ++i) {
            const int sb = sb0 + i;
            if (sb < KG_SBW) {
                const int next = sb + LC_W_DEPTH - 1;
                if (next < KG_SBW)
                    lc_load_w(wp, wb[(i + LC_W_DEPTH - 1) % LC_W_DEPTH],
                              sb_s[(i + LC_W_DEPTH - 1) % LC_W_DEPTH], k0, next);
                lc_cp_wait<KG_SLOTS - 2>();
                interleave(sb);
                if (KG_GROUP == 32) __syncwarp(); else kg_bar(1 + kw, KG_GROUP);
                stage(sb + KG_SLOTS - 1);
                lc_superblock(wb[i], sb_s[i], ring + (unsigned)(sb % KG_SLOTS) * LC_A_SB_BYTES, a_lo, acc);
            }
        }
    }

    // The K-warps' partials in shared memory (over the ring), summed in K order.
    lc_cp_wait<0>();
    __syncthreads();
#pragma unroll
    for (int v = 0; v < LC_ACC; ++v)
        asm volatile("st.shared.f32 [%0], %1;" ::"r"(base + 4u * (unsigned)((kw * LC_ACC + v) * KG_GROUP + p)),
                     "f"(acc[v])
                     : "memory");
    __syncthreads();
    for (int x = t; x < KG_GROUP * LC_ACC / 2; x += KG_THREADS) {
        const int pp = x % KG_GROUP;
        const int v = x / KG_GROUP * 2;
        const int tcx = half * KG_GROUP + pp;
        const int r = LC_C_ROW(tcx, v);
        if (r < LC_M) {
            float sx = 0.0f, sy = 0.0f;
#pragma unroll
            for (int q = 0; q < KG_WK; ++q) {
                float a, b;
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(a) : "r"(base + 4u * (unsigned)((q * LC_ACC + v) * KG_GROUP + pp)) : "memory");
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(b) : "r"(base + 4u * (unsigned)((q * LC_ACC + v + 1) * KG_GROUP + pp)) : "memory");
                sx += a;
                sy += b;
            }
            unsigned h;
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(sy), "f"(sx));
            *reinterpret_cast<unsigned*>(C + LC_C_GOFF((long long)r, (long long)(n0 + LC_C_COL(tcx, v)))) = h;
        }
    }
    (void)ws;
    (void)counters;
}

#ifdef LAYCERT_HOST_LAUNCHER
#include <cuda_runtime.h>
static int lc_ready = 0;
extern "C" int laycert_w4a16_launch(const void* A, const void* W, const void* S, void* C, void* stream) {
    if (!lc_ready) {
        if (cudaFuncSetAttribute(laycert_w4a16, cudaFuncAttributeMaxDynamicSharedMemorySize, KG_SMEM)) return 3004;
        lc_ready = 1;
    }
    laycert_w4a16<<<KG_GRID, KG_THREADS, KG_SMEM, (cudaStream_t)stream>>>(
        (const lc_elem*)A, (const unsigned*)W, (const lc_elem*)S, (lc_elem*)C, 0, 0);
    return (int)cudaGetLastError();
}
extern "C" int laycert_w4a16_grid() { return KG_GRID; }
#endif
