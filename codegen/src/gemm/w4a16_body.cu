// ---------------------------------------------------------------------------------------------
// W4A16 body (codegen/src/gemm/w4a16_body.cu, shared by every W4A16 plan; the constants, index
// macros, swizzle, mma wrapper and LC_W4_SCHEDULE above it are the plan's, validated).
//
// CTA = LC_THREADS / 32 warps (one per 32 columns): LC_BN columns of C over the K-range [split * LC_KS, (split + 1) * LC_KS).
// A's K-range goes to shared memory once (LC_SB superblocks of the plan's a_s, rows >= M
// zero-filled); W streams with 16-byte loads, LC_W_DEPTH - 1 superblocks ahead of the one
// being multiplied (the scales with them); each B register is dequantized from two signed
// nibbles of a W word, the scale's mul.f16x2 the only rounding (as q * s in f16):
//   LC_DQ_PAIRS 0: the byte (2b, 2b + 1) (prmt, lop3, exact sub.f16x2, mul);
//   LC_DQ_PAIRS 1: the nibble pair (p, p + 4) (lop3, exact sub.f16x2 or fma.f16x2, mul).
// Either is two consecutive k of the packing (LC_W_PACK 0 with bytes, 1 with pairs: the mma
// runs over k in order and A is staged by cp.async in k order), or, with LC_A_KPERM (LC_W_PACK
// 0 with pairs), k and k + 16: the mma runs over k with bits 0 and 4 swapped inside each 32,
// so A is staged in that order (two 16-byte chunks at k and k + 16, interleaved in place by
// prmt); the sum over k is the same. LC_CLUSTER_REDUCE: the LC_SPLITS CTAs of a column tile are
// one thread-block cluster; each writes its f32 partial tile into its own shared memory, and
// after a cluster barrier CTA p sums its share of the tile's pairs over every split's partial
// (distributed shared memory, split order) and stores C. Otherwise each split stores its
// partial in the workspace, and the last CTA of the column tile sums them in split order.
// LC_KGROUP: a different CTA around the same plan (see the kernel under #if LC_KGROUP below):
// column warps x K-warps holding all of K, partials summed in shared memory.
// ---------------------------------------------------------------------------------------------

// 16 bytes of W, read once: no L1 allocation.
__device__ __forceinline__ lc_v4 lc_ldg_stream(const unsigned* p) {
    lc_v4 v;
    asm("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned lc_word(const lc_v4& v, int w) {
    return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}
#if LC_DQ_PAIRS
// The nibble-pair dequantization constants (see lc_dq): the masks of pieces 0 and 1 (the
// nibble at bits 0..3 or 4..7 of each half); 1032 and 1152 (= 1024 + 16 * 8) in both halves,
// each with the nibble's top bit's place; 1/16 and -72 in both halves.
#define LC_DQ_SHIFT 8
#define LC_DQP_MASK_EVEN 0x000F000Fu
#define LC_DQP_BIAS_EVEN 0x64086408u
#define LC_DQP_SUB_EVEN 0x64086408u
#define LC_DQP_MASK_ODD 0x00F000F0u
#define LC_DQP_BIAS_ODD 0x64806480u
#define LC_DQP_MUL_ODD 0x2C002C00u
#define LC_DQP_ADD_ODD 0xD480D480u
// Nibbles p and p + 4 of `word` (p = 0..3; signed int4) as f16x2 (nibble p -> the low half),
// times s2 (f16x2). `sh8` is word >> 8, so pieces 2 and 3 are pieces 0 and 1 of sh8. One lop3
// keeps the two nibbles (bits 0..3 and 16..19, or 4..7 and 20..23) and sets the exponent of
// 1024 with the nibble's top bit flipped (n ^ 8 = q + 8): even p gives 1024 + q + 8 and an
// exact sub.f16x2 of 1032 leaves q; odd p gives 1024 + 16 (q + 8) and an exact fma.f16x2 by 1/16
// plus -72 leaves q. mul.f16x2 applies the scale (one rounding). `codegen/tests/
// w4a16_dequant.rs` replays the bit arithmetic on every pair of nibbles at every position.
__device__ __forceinline__ unsigned lc_dq(unsigned word, unsigned sh8, int p, unsigned s2) {
    const unsigned w = p < 2 ? word : sh8;
    unsigned x, r;
    if (p % 2 == 0) {
        asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(x) : "r"(w), "r"(LC_DQP_MASK_EVEN), "r"(LC_DQP_BIAS_EVEN));
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(LC_DQP_SUB_EVEN));
    } else {
        asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(x) : "r"(w), "r"(LC_DQP_MASK_ODD), "r"(LC_DQP_BIAS_ODD));
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(LC_DQP_MUL_ODD), "r"(LC_DQP_ADD_ODD));
    }
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));
    return r;
}
#else
// The byte dequantization constants (see lc_dq): prmt selector of byte 0 and its step per byte;
// the nibble mask; the exponent bias XOR the nibble's top bit; 1032 in both halves.
#define LC_DQ_SHIFT 4
#define LC_DQ_SEL 0x4400u
#define LC_DQ_SEL_STEP 0x1111u
#define LC_DQ_MASK 0x000F000Fu
#define LC_DQ_BIAS 0x64086408u
#define LC_DQ_SUB 0x64086408u
// Byte `b` of `word` (two signed int4: the low nibble -> the low half) as f16x2, times s2
// (f16x2). `sh4` is word >> 4: prmt puts byte b of word in the low half and byte b of sh4 in
// the high half, so the two nibbles land in bits 0..3 of each half; one lop3 masks them and
// sets the exponent of 1024 with the nibble's top bit flipped (n ^ 8 = q + 8 for the
// two's-complement nibble n of q), sub.f16x2 takes 1032 away (q exactly), mul.f16x2 applies
// the scale (one rounding, as q * s in f16). `codegen/tests/w4a16_dequant.rs` replays the bit
// arithmetic on all 256 bytes.
__device__ __forceinline__ unsigned lc_dq(unsigned word, unsigned sh4, int b, unsigned s2) {
    const unsigned d = __byte_perm(word, sh4, LC_DQ_SEL + LC_DQ_SEL_STEP * (unsigned)b);
    unsigned x, r;
    asm("lop3.b32 %0, %1, %2, %3, 0x6A;" : "=r"(x) : "r"(d), "r"(LC_DQ_MASK), "r"(LC_DQ_BIAS));
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(LC_DQ_SUB));
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(r), "r"(s2));
    return r;
}

#endif
#if LC_A_KPERM
// A's staging in the mma's k order: the 16-byte chunks lo (k .. k + 7) and hi (k + 16 ..
// k + 23) of one row, copied in k order, become in place, word by word, prmt(lo, hi, LC_A_PRMT_LO) (the low halves: A's
// k + 2i, k + 16 + 2i) at the mma's k-positions k .. k + 7 and prmt(lo, hi, LC_A_PRMT_HI) (the
// high halves: k + 2i + 1, k + 17 + 2i) at k + 16 .. k + 23 (validated as the plan's a_s
// holding A at mma_k; replayed on __byte_perm by codegen/tests/w4a16_dequant.rs).
#define LC_A_PRMT_LO 0x5410u
#define LC_A_PRMT_HI 0x7632u
__device__ __forceinline__ lc_v4 lc_a_prmt(const lc_v4& lo, const lc_v4& hi, unsigned sel) {
    return {__byte_perm(lo.x, hi.x, sel), __byte_perm(lo.y, hi.y, sel),
            __byte_perm(lo.z, hi.z, sel), __byte_perm(lo.w, hi.w, sel)};
}
// This thread's chunk pair (at byte offsets at[0], at[1] of a superblock) of superblocks
// sb0, sb0 + LC_THREADS / LC_A_PAIRS, ... (the ones it copied; `base` is superblock sb0's),
// interleaved in place once its cp.async have landed: four superblocks' chunks read before any
// is written back.
__device__ __forceinline__ void lc_a_interleave(unsigned base, const unsigned (&at)[2], int sb0) {
    constexpr int step = LC_THREADS / LC_A_PAIRS;
#pragma unroll 1
    for (int s0 = 0; sb0 + s0 < LC_SB; s0 += 4 * step) {
        lc_v4 lo[4], hi[4];
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            lo[b] = hi[b] = lc_v4{0u, 0u, 0u, 0u};
            const unsigned sb = base + (unsigned)(s0 + b * step) * LC_A_SB_BYTES;
            if (sb0 + s0 + b * step < LC_SB) {
                lo[b] = lc_ld_shared_v4(sb + at[0]);
                hi[b] = lc_ld_shared_v4(sb + at[1]);
            }
        }
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const unsigned sb = base + (unsigned)(s0 + b * step) * LC_A_SB_BYTES;
            if (sb0 + s0 + b * step < LC_SB) {
                lc_st_shared_v4(sb + at[0], lc_a_prmt(lo[b], hi[b], LC_A_PRMT_LO));
                lc_st_shared_v4(sb + at[1], lc_a_prmt(lo[b], hi[b], LC_A_PRMT_HI));
            }
        }
    }
}
#endif

#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])
#define LC_W4_MMA(ci, g, j, w0, b0, w1, b1)                                                     \
    lc_mma(acc[ci], acc[ci + 1], acc[ci + 2], acc[ci + 3], af[g][0], af[g][1], af[g][2],      \
           af[g][3], lc_dq(lc_word(wv[j], w0), lc_word(wh[j], w0), b0, sv[j]),                  \
           lc_dq(lc_word(wv[j], w1), lc_word(wh[j], w1), b1, sv[j]))

// This thread's W vectors and scales, addressed from one pointer each: vector j of superblock
// sb is w + sb * LC_W_SB_WORDS + j * LC_W_VSTEP (LC_W_GOFF is a sum of one-coordinate terms,
// one superblock along k is LC_W_SB_WORDS words everywhere and vector j + 1 LC_W_VSTEP words
// after vector j: validated), its scale s[LC_S_GOFF(0, g) + j * LC_S_VSTEP] (constant offsets
// the loads take as immediates: session 19, fewer address instructions per superblock).
struct lc_wptr {
    const unsigned* w;
    const lc_elem* s;
};
__device__ __forceinline__ lc_wptr lc_w_bases(const unsigned* __restrict__ W,
                                              const lc_elem* __restrict__ S, int n0, int k0,
                                              int t) {
    lc_wptr p;
    p.w = W + LC_W_GOFF((long long)n0 + LC_W_ROW(t, 0), (long long)k0 + LC_W_K(t, 0)) / 8;
    p.s = S + LC_S_GOFF((long long)n0 + LC_S_N(t, 0), 0);
    return p;
}
// The 16-byte W vectors and the group scales (as f16x2) of this thread for superblock sb:
// both are loads that the superblock's arithmetic waits on, so both are issued
// LC_W_DEPTH - 1 superblocks ahead.
__device__ __forceinline__ void lc_load_w(const lc_wptr& p, lc_v4 (&wv)[LC_WV],
                                          unsigned (&sv)[LC_WV], int k0, int sb) {
    const int g = (k0 + sb * 128) / LC_GROUP;
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        wv[j] = lc_ldg_stream(p.w + sb * LC_W_SB_WORDS + j * LC_W_VSTEP);
        sv[j] = p.s[LC_S_GOFF(0, g) + j * LC_S_VSTEP];
    }
}

// One superblock: the plan's schedule of ldmatrix and mma.
__device__ __forceinline__ void lc_superblock(const lc_v4 (&wv)[LC_WV], const unsigned (&s1)[LC_WV],
                                              unsigned sa, const unsigned (&a_lo)[LC_A_GROUPS],
                                              float (&acc)[LC_ACC]) {
    unsigned sv[LC_WV];
    lc_v4 wh[LC_WV];  // each W word >> LC_DQ_SHIFT (lc_dq)
#pragma unroll
    for (int j = 0; j < LC_WV; ++j) {
        // (s, s): the mul's operand selects the low half twice (HMUL2 .H0_H0), no instruction
        asm("mov.b32 %0, {%1, %1};" : "=r"(sv[j]) : "h"((unsigned short)s1[j]));
        wh[j] = {wv[j].x >> LC_DQ_SHIFT, wv[j].y >> LC_DQ_SHIFT, wv[j].z >> LC_DQ_SHIFT,
                 wv[j].w >> LC_DQ_SHIFT};
    }
    unsigned af[LC_A_GROUPS][4];
    LC_W4_SCHEDULE
}

// Two f32 sums (columns c, c + 1 of one row) as an f16 pair at element offset `off` of C.
__device__ __forceinline__ void lc_store_c2(lc_elem* C, long long off, float x, float y) {
    unsigned h;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(y), "f"(x));
    *reinterpret_cast<unsigned*>(C + off) = h;
}

// A cluster-wide barrier: every thread of every CTA of the cluster; release before, acquire
// after (the partials written before it are visible to every CTA after it).
__device__ __forceinline__ void lc_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// Two f32 at shared address `addr` of CTA `rank` of this cluster.
__device__ __forceinline__ float2 lc_ld_cluster_f2(unsigned addr, unsigned rank) {
    unsigned remote;
    float2 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
    return v;
}

#if LC_KGROUP
// The K-group CTA (LC_KGROUP; codegen::gemm::w4a16::W4a16Config::kwarps): LC_CWARPS column warps
// x LC_KWARPS K-warps, all of K. Thread t of CTA b is the plan's thread LC_KG_TC(b, t) of column
// tile LC_KG_TILE(b) over K-warp LC_KG_KW(t)'s K-range [LC_KG_K0(w), + LC_KS) (validated: every
// (tile, plan thread, K-warp) once, hardware lane = plan lane). The LC_GROUP_THREADS threads of
// one K-warp index share A through a ring of LC_A_SLOTS superblocks (the plan's a_s each), filled
// by their own cp.async LC_A_SLOTS - 1 superblocks ahead (rows < M; rows >= M zeroed once), one
// named barrier (1 + K-warp) per superblock; W streams into registers as in the split-K CTA. At
// the end every thread's accumulators go to shared memory (LC_KG_P_OFF) and reduction pair x
// sums value LC_KG_R_V(x) (and the next) of group thread LC_KG_R_P(x) over the K-warps in order
// (deterministic) and stores it as f16: no workspace, no counter, one pass over C.
__device__ __forceinline__ void lc_named_barrier(int id, int n) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
extern "C" __global__ void __launch_bounds__(LC_THREADS, LC_MIN_CTAS)
    laycert_w4a16(const lc_elem* __restrict__ A, const unsigned* __restrict__ W,
                  const lc_elem* __restrict__ S, lc_elem* __restrict__ C, float* __restrict__ ws,
                  unsigned* __restrict__ counters) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const int b = blockIdx.x;
    const int t = threadIdx.x;
    const int w = LC_KG_KW(t);
    const int p = t % LC_GROUP_THREADS;  // this thread in its K-group
    const int tc = LC_KG_TC(b, t);       // the plan's thread
    const int n0 = LC_KG_TILE(b) * LC_BN;
    const int k0 = LC_KG_K0(w);
    const unsigned ring = base + (unsigned)(w * LC_A_SLOTS) * LC_A_SB_BYTES;

    const lc_wptr wp = lc_w_bases(W, S, n0, k0, tc);
    lc_v4 wb[LC_W_DEPTH][LC_WV];
    unsigned sb_s[LC_W_DEPTH][LC_WV];
#pragma unroll
    for (int i = 0; i + 1 < LC_W_DEPTH; ++i)
        if (i < LC_SB) lc_load_w(wp, wb[i], sb_s[i], k0, i);

    // Rows >= M of every slot: zeroed once (the ring only copies rows < M).
    if (LC_M < 16) {
        for (int c = p; c < LC_A_SLOTS * 256; c += LC_GROUP_THREADS) {
            const int r = LC_KG_A_ROW(c % 256), k = LC_KG_A_K(c % 256);
            if (r >= LC_M)
                lc_st_shared_v4(ring + (unsigned)(c / 256) * LC_A_SB_BYTES + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)),
                                lc_v4{0u, 0u, 0u, 0u});
        }
    }
#if LC_A_KPERM
    // A in the mma's k order: a thread copies chunk pairs (k, k + 16) of rows < M (the plan's
    // pairs 0 .. 8 M - 1) and, once they land, interleaves them in place (as lc_a_interleave)
    // before the group barrier.
    auto stage = [&](int sb) {
        if (sb < LC_SB) {
            const unsigned slot = ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int x0 = 0; x0 < LC_M * 8; x0 += LC_GROUP_THREADS) {
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
        const unsigned slot = ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
        for (int x0 = 0; x0 < LC_M * 8; x0 += LC_GROUP_THREADS) {
            const int x = x0 + p;
            if (x < LC_M * 8) {
                const int r = LC_A_PR_ROW(x), k = LC_A_PR_K(x);
                const unsigned at0 = slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
                const unsigned at1 = slot + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k + 16));
                const lc_v4 lo = lc_ld_shared_v4(at0), hi = lc_ld_shared_v4(at1);
                lc_st_shared_v4(at0, lc_a_prmt(lo, hi, LC_A_PRMT_LO));
                lc_st_shared_v4(at1, lc_a_prmt(lo, hi, LC_A_PRMT_HI));
            }
        }
    };
#else
    // A in k order: chunks 0 .. 16 M - 1 (the rows < M); this thread's chunk p + i x (group
    // threads) from one pointer (+ sb superblocks + i LC_KG_A_ISTEP: validated), its a_s
    // offsets computed once.
    constexpr int LC_A_ITERS = (LC_M * 16 + LC_GROUP_THREADS - 1) / LC_GROUP_THREADS;
    const lc_elem* a_src = A + LC_A_GOFF((long long)LC_KG_A_ROW(p), (long long)(k0 + LC_KG_A_K(p)));
    unsigned a_dst[LC_A_ITERS];
#pragma unroll
    for (int i = 0; i < LC_A_ITERS; ++i) {
        const int c = i * LC_GROUP_THREADS + p;
        a_dst[i] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_KG_A_ROW(c), LC_KG_A_K(c)));
    }
    auto stage = [&](int sb) {
        if (sb < LC_SB) {
            const unsigned slot = ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES;
#pragma unroll
            for (int i = 0; i < LC_A_ITERS; ++i)
                if (i * LC_GROUP_THREADS + p < LC_M * 16)
                    lc_cp_async16(slot + a_dst[i], a_src + sb * 128 + (long long)i * LC_KG_A_ISTEP, 16u);
        }
        lc_cp_commit();
    };
    auto interleave = [&](int) {};
#endif
#pragma unroll
    for (int s = 0; s + 1 < LC_A_SLOTS; ++s) stage(s);

    unsigned a_lo[LC_A_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g)
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_LDSM_ROW(tc, g), LC_A_LDSM_K(tc, g)));
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    if (LC_M < 16) __syncthreads();  // the zero rows

    // Superblock sb: its A landed (this thread's copies; the group barrier, everyone's, and
    // every group thread is done with slot (sb - 1) % LC_A_SLOTS, refilled next).
#pragma unroll 1
    for (int sb0 = 0; sb0 < LC_SB; sb0 += LC_W_DEPTH) {
#pragma unroll
        for (int i = 0; i < LC_W_DEPTH; ++i) {
            const int sb = sb0 + i;
            if (sb < LC_SB) {
                const int next = sb + LC_W_DEPTH - 1;
                if (next < LC_SB)
                    lc_load_w(wp, wb[(i + LC_W_DEPTH - 1) % LC_W_DEPTH],
                              sb_s[(i + LC_W_DEPTH - 1) % LC_W_DEPTH], k0, next);
                lc_cp_wait<LC_A_SLOTS - 2>();
                interleave(sb);
                if (LC_GROUP_THREADS == 32)
                    __syncwarp();
                else
                    lc_named_barrier(1 + w, LC_GROUP_THREADS);
                stage(sb + LC_A_SLOTS - 1);
                lc_superblock(wb[i], sb_s[i], ring + (unsigned)(sb % LC_A_SLOTS) * LC_A_SB_BYTES, a_lo, acc);
            }
        }
    }

    // The K-warps' partials in shared memory (over the rings), summed in K-warp order.
    lc_cp_wait<0>();
    __syncthreads();
#pragma unroll
    for (int v = 0; v < LC_ACC; ++v)
        asm volatile("st.shared.f32 [%0], %1;" ::"r"(base + 4u * (unsigned)LC_KG_P_OFF(w, v, p)), "f"(acc[v])
                     : "memory");
    __syncthreads();
    for (int x = t; x < LC_GROUP_THREADS * LC_ACC / 2; x += LC_THREADS) {
        const int pp = LC_KG_R_P(x);
        const int v = LC_KG_R_V(x);
        const int tx = LC_KG_TC(b, pp);  // the plan's thread whose accumulators these are
        const int r = LC_C_ROW(tx, v);
        const long long c = (long long)n0 + LC_C_COL(tx, v);
        if (LC_C_GUARD(r, c)) {
            float sx = 0.0f, sy = 0.0f;
#pragma unroll
            for (int q = 0; q < LC_KWARPS; ++q) {
                float e0, e1;
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(e0) : "r"(base + 4u * (unsigned)LC_KG_P_OFF(q, v, pp)) : "memory");
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(e1) : "r"(base + 4u * (unsigned)LC_KG_P_OFF(q, v + 1, pp)) : "memory");
                sx += e0;
                sy += e1;
            }
            lc_store_c2(C, LC_C_GOFF(r, c), sx, sy);
        }
    }
    (void)ws;
    (void)counters;
}
#else
extern "C" __global__ void __launch_bounds__(LC_THREADS, LC_MIN_CTAS)
#if LC_CLUSTER_REDUCE
    __cluster_dims__(LC_SPLITS, 1, 1)
#endif
    laycert_w4a16(const lc_elem* __restrict__ A, const unsigned* __restrict__ W,
                  const lc_elem* __restrict__ S, lc_elem* __restrict__ C, float* __restrict__ ws,
                  unsigned* __restrict__ counters) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    __shared__ int lc_last;
    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const int t = threadIdx.x;
    // The splits of a column tile are consecutive CTAs (one cluster with LC_CLUSTER_REDUCE:
    // its CTA rank is the split).
    const int tile = blockIdx.x / LC_SPLITS;
    const int split = blockIdx.x % LC_SPLITS;
    const int n0 = tile * LC_BN;
    const int k0 = split * LC_KS;

    // The weight stream starts first: the first LC_W_DEPTH - 1 superblocks (a ring of
    // LC_W_DEPTH register buffers, indexed by constants once the loops below are unrolled).
    const lc_wptr wp = lc_w_bases(W, S, n0, k0, t);
    lc_v4 wb[LC_W_DEPTH][LC_WV];
    unsigned sb_s[LC_W_DEPTH][LC_WV];
#pragma unroll
    for (int i = 0; i + 1 < LC_W_DEPTH; ++i)
        if (i < LC_SB) lc_load_w(wp, wb[i], sb_s[i], k0, i);

#if LC_A_KPERM
    // A's K-range into shared memory by chunk pairs (see LC_A_PRMT_LO): the CTA's threads take
    // the LC_SB * LC_A_PAIRS pairs in turn and copy both 16-byte chunks of each in k order
    // (cp.async, rows >= M zero-filled); after the wait each thread interleaves its own pairs in
    // place (lc_a_interleave), so no other thread's copies are read before the barrier.
    static_assert(LC_THREADS % LC_A_PAIRS == 0, "a thread takes the same pair of every superblock it stages");
    const int a_pr_r = LC_A_PR_ROW(t % LC_A_PAIRS);
    const int a_pr_k = LC_A_PR_K(t % LC_A_PAIRS);
    const unsigned a_pr_at[2] = {2u * (unsigned)lc_swz_a(LC_A_SLIN(a_pr_r, a_pr_k)),
                                 2u * (unsigned)lc_swz_a(LC_A_SLIN(a_pr_r, a_pr_k + 16))};
    for (int sb = t / LC_A_PAIRS; sb < LC_SB; sb += LC_THREADS / LC_A_PAIRS) {
        const long long gr = a_pr_r;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int gk = k0 + sb * 128 + a_pr_k + 16 * h;
            const bool in = LC_A_GUARD(gr, gk);
            const lc_elem* src = in ? A + LC_A_GOFF(gr, gk) : A;
            lc_cp_async16(base + sb * LC_A_SB_BYTES + a_pr_at[h], src, in ? 16u : 0u);
        }
    }
#else
    // A's K-range into shared memory, superblock by superblock in the plan's a_s layout.
    for (int sb = 0; sb < LC_SB; ++sb) {
#pragma unroll
        for (int j = 0; j < LC_A_CHUNKS; ++j) {
            const int r = LC_A_CP_ROW(t, j);
            const int k = LC_A_CP_K(t, j);
            const long long gr = r;
            const int gk = k0 + sb * 128 + k;
            const bool in = LC_A_GUARD(gr, gk);
            const lc_elem* src = in ? A + LC_A_GOFF(gr, gk) : A;
            lc_cp_async16(base + sb * LC_A_SB_BYTES + 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k)), src,
                          in ? 16u : 0u);
        }
    }
#endif
    lc_cp_commit();
    unsigned a_lo[LC_A_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g) {
        const int r = LC_A_LDSM_ROW(t, g);
        const int k = LC_A_LDSM_K(t, g);
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
    }
    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    lc_cp_wait<0>();
#if LC_A_KPERM
    lc_a_interleave(base + (unsigned)(t / LC_A_PAIRS) * LC_A_SB_BYTES, a_pr_at, t / LC_A_PAIRS);
#endif
    __syncthreads();

    // W buffers rotate: superblock sb + LC_W_DEPTH - 1 is in flight while sb is multiplied.
#pragma unroll 1
    for (int sb0 = 0; sb0 < LC_SB; sb0 += LC_W_DEPTH) {
#pragma unroll
        for (int i = 0; i < LC_W_DEPTH; ++i) {
            const int sb = sb0 + i;
            if (sb < LC_SB) {
                const int next = sb + LC_W_DEPTH - 1;
                if (next < LC_SB)
                    lc_load_w(wp, wb[(i + LC_W_DEPTH - 1) % LC_W_DEPTH],
                              sb_s[(i + LC_W_DEPTH - 1) % LC_W_DEPTH], k0, next);
                lc_superblock(wb[i], sb_s[i], base + sb * LC_A_SB_BYTES, a_lo, acc);
            }
        }
    }

#if LC_CLUSTER_REDUCE
    // This split's partial tile (all 16 rows) into its own shared memory, over A's staging.
    __syncthreads();  // every warp's last ldmatrix of a_s is done
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {
        const int r = LC_C_ROW(t, v);
        const int c = LC_C_COL(t, v);
        asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(base + 4u * (unsigned)(LC_P_OFF(r, c))),
                     "f"(acc[v]), "f"(acc[v + 1])
                     : "memory");
    }
    lc_cluster_sync();
    // This CTA's share of the reduction pairs: the partials summed in split order.
#pragma unroll
    for (int i = split * (LC_R_ITERS / LC_SPLITS); i < (split + 1) * (LC_R_ITERS / LC_SPLITS); ++i) {
        const int r = LC_R_ROW(t, i);
        const int cl = LC_R_COL(t, i);
        const long long c = (long long)n0 + cl;
        if (LC_C_GUARD(r, c)) {
            float x = 0.0f, y = 0.0f;
#pragma unroll
            for (int p = 0; p < LC_SPLITS; ++p) {
                const float2 a = lc_ld_cluster_f2(base + 4u * (unsigned)(LC_P_OFF(r, cl)), (unsigned)p);
                x += a.x;
                y += a.y;
            }
            lc_store_c2(C, LC_C_GOFF(r, c), x, y);
        }
    }
    lc_cluster_sync();  // no CTA leaves while another reads its partial
    (void)ws;
    (void)counters;
#else
    // This split's partial tile (rows < M) into the workspace.
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {
        const int r = LC_C_ROW(t, v);
        const long long c = (long long)n0 + LC_C_COL(t, v);
        const long long p = split;
        if (LC_C_GUARD(r, c)) {
            asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(ws + LC_WS_OFF(p, r, c)),
                         "f"(acc[v]), "f"(acc[v + 1])
                         : "memory");
        }
    }
    // The split's arrival, as CUTLASS's generic barrier (red.release after __syncthreads): the
    // barrier orders every thread's partial stores before thread 0's counter increment, an
    // acq_rel gpu-scope atomic (its release covers them by cumulativity; its acquire orders the
    // last CTA's loads of the other partials after it, and the barrier orders that before every
    // thread's loads). Two membar.sc fences around a relaxed atomicAdd did the same 0.2 us
    // slower (H200, bench/gpu/results/probes-2026-11-25-s15.txt).
    __syncthreads();
    if (t == 0) {
        unsigned old;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(old)
                     : "l"(counters + tile)
                     : "memory");
        lc_last = old == (unsigned)(LC_SPLITS - 1);
    }
    __syncthreads();
    if (!lc_last) return;
    // The last CTA of the column tile: partials summed in split order, converted, stored. With
    // more than 8 rows the partials of LC_R_BATCH pairs are all loaded before any is summed (one
    // L2 round trip per batch instead of one per pair; at most 64 registers of partials; H200,
    // 16x8192x8192: 21.5 -> 20.3 us). With at most 8 rows most pairs are outside the problem and
    // the batch only costs registers (1x8192x8192: 18.7 -> 19.1 us), so pairs go one at a time.
    constexpr int LC_R_BATCH = LC_M <= 8 || LC_SPLITS >= 32 ? 1 : 32 / LC_SPLITS;
#pragma unroll
    for (int i0 = 0; i0 < LC_R_ITERS; i0 += LC_R_BATCH) {
        float2 part[LC_R_BATCH][LC_SPLITS];
#pragma unroll
        for (int b = 0; b < LC_R_BATCH; ++b) {
            const int i = i0 + b;
            const int r = LC_R_ROW(t, i);
            const long long c = (long long)n0 + LC_R_COL(t, i);
            const bool in = i < LC_R_ITERS && LC_C_GUARD(r, c);
#pragma unroll
            for (int p = 0; p < LC_SPLITS; ++p)
                part[b][p] = in ? __ldcg(reinterpret_cast<const float2*>(ws + LC_WS_OFF((long long)p, r, c)))
                                : make_float2(0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < LC_R_BATCH; ++b) {
            const int i = i0 + b;
            const int r = LC_R_ROW(t, i);
            const long long c = (long long)n0 + LC_R_COL(t, i);
            if (i < LC_R_ITERS && LC_C_GUARD(r, c)) {
                float x = 0.0f, y = 0.0f;
#pragma unroll
                for (int p = 0; p < LC_SPLITS; ++p) {
                    x += part[b][p].x;
                    y += part[b][p].y;
                }
                lc_store_c2(C, LC_C_GOFF(r, c), x, y);
            }
        }
    }
    if (t == 0) counters[tile] = 0u;
#endif
}
#endif  // LC_KGROUP
