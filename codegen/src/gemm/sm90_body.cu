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
// persistent: cluster c takes work items c, c + clusters, ... Item w is split w % LC_SPLITS of
// tile w / LC_SPLITS (tiles in a grouped, LC_GROUP_M, order); split s covers k-blocks
// [lc_kb_begin(s), min(lc_kb_end(s), kblocks)). With LC_SPLITS > 1 each split writes its f32
// partial tile to the workspace (register order, coalesced) and counts itself on the tile's
// counter (launch `epoch` e: the counter reaches LC_SPLITS * e); once all have, split s sums
// the words [lc_red_begin(s), + LC_RED_WORDS) of the partials in split order 0, 1, ...
// (deterministic) and stores them. All items run in one wave (the launcher checks). Ragged edges: TMA zero-fills out-of-bounds rows and
// k-columns (they add nothing), the epilogue stores only cells inside (M, N).
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

__device__ __forceinline__ unsigned lc_load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void lc_consumer_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(128 * LC_CONSUMERS) : "memory");
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
                     const __grid_constant__ lc_tensor_map tmB, float* __restrict__ ws,
                     unsigned* __restrict__ counters, unsigned epoch) {
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
    const int items = groups_m * tiles_n * LC_SPLITS;
    const int clusters = gridDim.x / LC_CLUSTER;
    const int first_item = blockIdx.x / LC_CLUSTER;
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
            for (int w = first_item; w < items; w += clusters) {
                const int split = w % LC_SPLITS;
                int gm, tn;
                lc_tile(w / LC_SPLITS, groups_m, tiles_n, gm, tn);
                const int m0 = (gm * LC_CLUSTER + (int)rank) * LC_BM;
                const int n0 = tn * LC_BN;
                const int kb1 = (int)min(lc_kb_end(split), (long long)kblocks);
                for (int kb = (int)lc_kb_begin(split); kb < kb1; ++kb) {
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
        for (int w = first_item; w < items; w += clusters) {
            const int split = w % LC_SPLITS;
            const int tile = w / LC_SPLITS;
            int gm, tn;
            lc_tile(tile, groups_m, tiles_n, gm, tn);
            const int m0 = (gm * LC_CLUSTER + (int)rank) * LC_BM;
            const int n0 = tn * LC_BN;
            const int kb0 = (int)lc_kb_begin(split);
            const int kb1 = (int)min(lc_kb_end(split), (long long)kblocks);
            for (int kb = kb0; kb < kb1; ++kb) {
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
                    lc_wgmma(d, lc_desc(a), lc_desc(b), (kb > kb0 || kk > 0) ? 1 : 0);
                }
                lc_wgmma_commit();
                // Keep LC_WAIT_DEPTH groups in flight; the buffer of the group that finished is
                // released to every CTA of the cluster.
                {
                    LC_T0();
                    lc_wgmma_wait<LC_WAIT_DEPTH>();
                    LC_ACC(1);
                }
                if (kb - kb0 >= LC_WAIT_DEPTH && tid == 0) {
                    lc_release(empty, (s + LC_STAGES - LC_WAIT_DEPTH) % LC_STAGES);
                }
                if (++s == LC_STAGES) {
                    s = 0;
                    phase ^= 1u;
                }
            }
            lc_wgmma_wait<0>();
            if (tid == 0) {
                const int done = kb1 - kb0;
                const int held = done < LC_WAIT_DEPTH ? done : LC_WAIT_DEPTH;
                for (int j = held; j >= 1; --j) lc_release(empty, (s + LC_STAGES - j) % LC_STAGES);
            }
            const int thread = c * 128 + tid;
            if (LC_SPLITS > 1) {
                // Split-K: publish this split's partial, wait until every split of the tile has
                // (they are co-resident: the launcher runs all items in one wave), then reduce
                // this split's slice of the tile in split order and store it.
#pragma unroll
                for (int i = 0; i < LC_ACC_REGS; i += 4) {
                    __stcg(reinterpret_cast<float4*>(ws + lc_ws_index(tile, split, thread, i)),
                           make_float4(d[i], d[i + 1], d[i + 2], d[i + 3]));
                }
                __threadfence();
                lc_consumer_sync();
                if (thread == 0) {
                    atomicAdd(&counters[tile], 1u);
                    while (lc_load_acquire(&counters[tile]) < LC_SPLITS * epoch) __nanosleep(64);
                }
                lc_consumer_sync();
                __threadfence();
                for (int q = 4 * thread; q < LC_RED_WORDS; q += 4 * 128 * LC_CONSUMERS) {
                    const int word = (int)lc_red_begin(split) + q;
                    const int th = word / LC_ACC_REGS, i = word % LC_ACC_REGS;
                    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    for (int sp = 0; sp < LC_SPLITS; ++sp) {
                        const float4 p = __ldcg(
                            reinterpret_cast<const float4*>(ws + lc_ws_index(tile, sp, th, i)));
                        acc.x += p.x;
                        acc.y += p.y;
                        acc.z += p.z;
                        acc.w += p.w;
                    }
                    const int tid_r = th % 128;
                    const long long row0 = (long long)m0 + (th / 128) * 64;
                    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
                    for (int h = 0; h < 4; h += 2) {
                        const long long row = row0 + lc_acc_row(tid_r, i + h);
                        const long long col = n0 + lc_acc_col(tid_r, i + h);
                        if (lc_store_guard(row, col)) {
                            lc_store_pair(C, lc_c_offset(row, col), v[h], v[h + 1], col + 1 < LC_N);
                        }
                    }
                }
                continue;
            }
            // Epilogue: accumulator register pairs (i, i + 1) are adjacent columns.
#ifdef LC_PROFILE
            const long long lc_te = clock64();
#endif
            const long long row0 = (long long)m0 + c * 64;
#pragma unroll
            for (int i = 0; i < LC_ACC_REGS; i += 2) {
                const long long row = row0 + lc_acc_row(tid, i);
                const long long col = n0 + lc_acc_col(tid, i);
#ifdef LC_NO_EPILOGUE
                if (d[i] == 12345.0f)
#endif
                if (lc_store_guard(row, col)) {
                    lc_store_pair(C, lc_c_offset(row, col), d[i], d[i + 1], col + 1 < LC_N);
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
