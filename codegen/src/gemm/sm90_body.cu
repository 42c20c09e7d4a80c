// ---------------------------------------------------------------------------------------------
// sm90 body (codegen/src/gemm/sm90_body.cu, shared by every sm90 plan; the constants, the
// accumulator index functions and the wgmma wrapper above it are the plan's, validated).
//
// One CTA = 1 producer warpgroup + LC_CONSUMERS consumer warpgroups. The producer's elected
// thread streams A and B k-blocks into an LC_STAGES-deep ring of shared buffers with TMA
// (SWIZZLE_128B or 64B: rows of LC_BK elements, the canonical K-major GMMA layout); in a cluster of LC_CLUSTER CTAs along M
// each CTA loads 1/LC_CLUSTER of the B tile and multicasts it to all. full[s] counts the TMA
// bytes; empty[s] counts one arrival per consumer warpgroup of every CTA of the cluster (each
// buffer is read by all of them). Consumers issue wgmma from shared-memory descriptors, keep
// one k-block in flight (wait_group 1) and release the buffer of the previous one. CTAs are
// persistent: cluster c takes tiles c, c + clusters, ... of a grouped (LC_GROUP_M) order.
// Ragged edges: TMA zero-fills out-of-bounds rows and k-columns (they add nothing), the
// epilogue stores only cells inside (M, N).
// ---------------------------------------------------------------------------------------------

#ifndef LC_WAIT_DEPTH
#define LC_WAIT_DEPTH 1  // wgmma groups left in flight before a buffer is released
#endif

#ifdef LC_PROFILE
// Diagnostics only (bench/gpu/gemm.py --profile): per CTA, clock cycles consumer 0 spent
// waiting for full buffers, in wgmma waits, in the epilogue, in total, and the producer's
// waits for empty buffers.
__device__ unsigned long long lc_prof[4096 * 8];
#define LC_T0() const long long lc_t0 = clock64()
#define LC_ACC(slot) if (tid == 0 && c == 0) lc_prof[blockIdx.x * 8 + (slot)] += clock64() - lc_t0
#else
#define LC_T0()
#define LC_ACC(slot)
#endif

struct __align__(64) lc_tensor_map { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned lc_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void lc_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void lc_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ bool lc_mbar_try(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok != 0;
}
__device__ __forceinline__ void lc_mbar_wait(unsigned bar, unsigned parity) {
    while (!lc_mbar_try(bar, parity)) {
    }
}
// Arrive on the barrier at the same shared offset in CTA `cta` of the cluster (default .release
// at .cta scope: the buffer's readers are this warpgroup's completed wgmma operations, and the
// writer is the TMA the producer issues after observing the phase; a .cluster-scope release
// would add a fence per k-block for nothing).
__device__ __forceinline__ void lc_mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile(
        "{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
        " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}" ::"r"(bar),
        "r"(cta)
        : "memory");
}
__device__ __forceinline__ void lc_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void lc_tma_load(unsigned dst, const lc_tensor_map* map, unsigned bar,
                                            int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(map), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}
__device__ __forceinline__ void lc_tma_load_multicast(unsigned dst, const lc_tensor_map* map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}
__device__ __forceinline__ void lc_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}
__device__ __forceinline__ unsigned lc_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void lc_wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void lc_wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void lc_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Releases buffer `s` to the producers of every CTA of the cluster (each multicast into it).
__device__ __forceinline__ void lc_release(unsigned long long* empty, int s) {
    if (LC_CLUSTER == 1) {
        lc_mbar_arrive(lc_smem_addr(&empty[s]));
        return;
    }
#pragma unroll
    for (unsigned r = 0; r < LC_CLUSTER; ++r) lc_mbar_arrive_cluster(lc_smem_addr(&empty[s]), r);
}

// The tile order: groups of LC_GROUP_M cluster rows, column by column inside a group, so the
// CTAs running at once share A rows and B columns in L2.
__device__ __forceinline__ void lc_tile(int t, int groups_m, int tiles_n, int& gm, int& tn) {
    const int per_group = LC_GROUP_M * tiles_n;
    const int g = t / per_group;
    const int first = g * LC_GROUP_M;
    const int rows = min(LC_GROUP_M, groups_m - first);
    const int r = t % per_group;
    gm = first + r % rows;
    tn = r / rows;
}

extern "C" __global__ void __launch_bounds__(128 * (LC_CONSUMERS + 1), 1)
    __cluster_dims__(LC_CLUSTER, 1, 1)
        laycert_gemm(lc_elem* __restrict__ C, const __grid_constant__ lc_tensor_map tmA,
                     const __grid_constant__ lc_tensor_map tmB) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    __shared__ __align__(8) unsigned long long full[LC_STAGES];
    __shared__ __align__(8) unsigned long long empty[LC_STAGES];

    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const unsigned sA = base;
    const unsigned sB = base + LC_STAGES * LC_A_STAGE_BYTES;
    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    const unsigned rank = LC_CLUSTER > 1 ? lc_cluster_rank() : 0u;

    if (threadIdx.x == 0) {
        for (int s = 0; s < LC_STAGES; ++s) {
            lc_mbar_init(lc_smem_addr(&full[s]), 1);
            lc_mbar_init(lc_smem_addr(&empty[s]), LC_CONSUMERS * LC_CLUSTER);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (LC_CLUSTER > 1) {
        lc_cluster_sync();
    } else {
        __syncthreads();
    }

    const int tiles_m = (LC_M + LC_BM - 1) / LC_BM;
    const int groups_m = (tiles_m + LC_CLUSTER - 1) / LC_CLUSTER;
    const int tiles_n = (LC_N + LC_BN - 1) / LC_BN;
    const int total = groups_m * tiles_n;
    const int clusters = gridDim.x / LC_CLUSTER;
    const int first_tile = blockIdx.x / LC_CLUSTER;
    const int kblocks = (LC_K + LC_BK - 1) / LC_BK;

#ifdef LC_PROFILE
    long long lc_start = 0;
#endif
    if (wg == 0) {
        // Producer: one elected thread issues every TMA.
        lc_producer_regs();
        if (tid == 0) {
            int s = 0;
            unsigned phase = 0;
            for (int t = first_tile; t < total; t += clusters) {
                int gm, tn;
                lc_tile(t, groups_m, tiles_n, gm, tn);
                const int m0 = (gm * LC_CLUSTER + (int)rank) * LC_BM;
                const int n0 = tn * LC_BN;
                for (int kb = 0; kb < kblocks; ++kb) {
#ifdef LC_PROFILE
                    const long long lc_t0 = clock64();
                    lc_mbar_wait(lc_smem_addr(&empty[s]), phase ^ 1u);
                    lc_prof[blockIdx.x * 8 + 4] += clock64() - lc_t0;
#else
                    lc_mbar_wait(lc_smem_addr(&empty[s]), phase ^ 1u);
#endif
                    const unsigned bar = lc_smem_addr(&full[s]);
#ifdef LC_FAKE_LOADS
                    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
                    if (++s == LC_STAGES) {
                        s = 0;
                        phase ^= 1u;
                    }
                    continue;
#endif
                    lc_mbar_expect_tx(bar, LC_A_STAGE_BYTES + LC_B_STAGE_BYTES);
                    lc_tma_load(sA + s * LC_A_STAGE_BYTES, &tmA, bar, kb * LC_BK, m0);
                    if (LC_CLUSTER > 1) {
                        lc_tma_load_multicast(
                            sB + s * LC_B_STAGE_BYTES + rank * (LC_B_STAGE_BYTES / LC_CLUSTER),
                            &tmB, bar, kb * LC_BK, n0 + (int)rank * (LC_BN / LC_CLUSTER),
                            (unsigned short)((1u << LC_CLUSTER) - 1u));
                    } else {
                        lc_tma_load(sB + s * LC_B_STAGE_BYTES, &tmB, bar, kb * LC_BK, n0);
                    }
                    if (++s == LC_STAGES) {
                        s = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        // Consumers: warpgroup c computes rows [64c, 64c + 64) of the CTA tile.
        lc_consumer_regs();
        const int c = wg - 1;
#ifdef LC_PROFILE
        lc_start = clock64();
#endif
        float d[LC_ACC_REGS];
        int s = 0;
        unsigned phase = 0;
        for (int t = first_tile; t < total; t += clusters) {
            int gm, tn;
            lc_tile(t, groups_m, tiles_n, gm, tn);
            const int m0 = (gm * LC_CLUSTER + (int)rank) * LC_BM;
            const int n0 = tn * LC_BN;
            for (int kb = 0; kb < kblocks; ++kb) {
                {
                    LC_T0();
                    lc_mbar_wait(lc_smem_addr(&full[s]), phase);
                    LC_ACC(0);
                }
                lc_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < LC_BK / 16; ++kk) {
                    const unsigned a = sA + s * LC_A_STAGE_BYTES + c * 64 * LC_ROW_BYTES + kk * 32;
                    const unsigned b = sB + s * LC_B_STAGE_BYTES + kk * 32;
                    lc_wgmma(d, lc_desc(a), lc_desc(b), (kb > 0 || kk > 0) ? 1 : 0);
                }
                lc_wgmma_commit();
                // Keep LC_WAIT_DEPTH groups in flight; the buffer of the group that finished is
                // released to every CTA of the cluster.
                {
                    LC_T0();
                    lc_wgmma_wait<LC_WAIT_DEPTH>();
                    LC_ACC(1);
                }
                if (kb >= LC_WAIT_DEPTH && tid == 0) {
                    lc_release(empty, (s + LC_STAGES - LC_WAIT_DEPTH) % LC_STAGES);
                }
                if (++s == LC_STAGES) {
                    s = 0;
                    phase ^= 1u;
                }
            }
            lc_wgmma_wait<0>();
            if (tid == 0) {
                const int held = kblocks < LC_WAIT_DEPTH ? kblocks : LC_WAIT_DEPTH;
                for (int j = held; j >= 1; --j) lc_release(empty, (s + LC_STAGES - j) % LC_STAGES);
            }
            // Epilogue: accumulator register pairs (i, i + 1) are adjacent columns.
#ifdef LC_PROFILE
            const long long lc_te = clock64();
#endif
            const long long row0 = (long long)m0 + c * 64;
#pragma unroll
            for (int i = 0; i < LC_ACC_REGS; i += 2) {
                const long long row = row0 + LC_ACC_ROW(tid, i);
                const int col = n0 + LC_ACC_COL(tid, i);
#ifdef LC_NO_EPILOGUE
                if (d[i] == 12345.0f)
#endif
                if (LC_STORE_GUARD) {
                    lc_store_pair(C, (long long)LC_C_OFFSET, d[i], d[i + 1], col + 1 < LC_N);
                }
            }
#ifdef LC_PROFILE
            if (tid == 0 && c == 0) lc_prof[blockIdx.x * 8 + 2] += clock64() - lc_te;
#endif
        }
    }
#ifdef LC_PROFILE
    if (wg == 1 && tid == 0) lc_prof[blockIdx.x * 8 + 3] = clock64() - lc_start;
#endif
    // No CTA may exit while a cluster peer can still arrive on its barriers.
    if (LC_CLUSTER > 1) {
        lc_cluster_sync();
    }
}
