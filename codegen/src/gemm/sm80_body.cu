// ---------------------------------------------------------------------------------------------
// sm80 body (codegen/src/gemm/sm80_body.cu, shared by every sm80 plan; the constants, index
// macros, swizzles, mma wrapper and LC_SCHEDULE above it are the plan's, validated).
//
// One CTA computes one LC_BM x LC_BN tile of C (grouped tile order). A and B k-blocks stream
// into an LC_STAGES-deep ring of shared buffers with cp.async of 16 bytes (8 or 4 where K is
// even but not a multiple of 8; rows or k-columns outside the problem are zero-filled through
// the src-size operand; where K is odd, through registers, LC_REG_STAGED); each stage holds
// the plan's a_s
// then b_s. Per k-block every warp loads its operand fragments with ldmatrix.x4 (group g = the
// plan's register values 8g..8g+7) and issues mma.sync in LC_SCHEDULE's order. The epilogue
// converts the accumulators, writes them into the plan's h_s layout (reusing the ring), and
// stores the plan's rows of o with 16-byte coalesced global stores, guarded at the edges.
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ void lc_st_shared_u32(unsigned addr, unsigned v) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void lc_st_global_v4(void* p, lc_v4 v) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}
// Element e (0..7) of a 16-byte vector of 2-byte values.
__device__ __forceinline__ unsigned short lc_v4_elem(const lc_v4& v, int e) {
    const unsigned w = e < 2 ? v.x : e < 4 ? v.y : e < 6 ? v.z : v.w;
    return (unsigned short)((e & 1) ? (w >> 16) : (w & 0xFFFFu));
}

#define LC_NEXT_STAGE()                                                                         \
    do {                                                                                        \
        if (nk < kblocks)                                                                       \
            lc_load_stage(A, B, base + (nk % LC_STAGES) * LC_STAGE_BYTES, m0, n0, nk * LC_BK, t); \
        lc_cp_commit();                                                                         \
    } while (0)
#if LC_FAST_LDSM
// Group g from group 0's address: the stage bases are multiples of 1024 bytes and every
// LC_X_LDSM_X(g) is below 1024, so (stage + lo) ^ x = stage + (lo ^ x) (validated).
#define LC_LDSM_A(g) lc_ldsm_x4(af[g], ((sa + a_lo0) ^ (LC_A_LDSM_X(g))) + (LC_A_LDSM_D(g)))
#define LC_LDSM_B(g) lc_ldsm_x4(bf[g], ((sb + b_lo0) ^ (LC_B_LDSM_X(g))) + (LC_B_LDSM_D(g)))
#else
#define LC_LDSM_A(g) lc_ldsm_x4(af[g], sa + a_lo[g])
#define LC_LDSM_B(g) lc_ldsm_x4(bf[g], sb + b_lo[g])
#endif
#if LC_PIPELINED
// Inside LC_SCHEDULE, after this k-block's LC_NEXT_STAGE: k-block kb + 1 has landed (at most
// LC_STAGES - 2 younger groups pending) and is visible to every thread; fragments loaded after
// this come from its stage.
#define LC_ADVANCE()                                                      \
    do {                                                                  \
        lc_cp_wait<LC_STAGES - 2>();                                      \
        __syncthreads();                                                  \
        sa = base + ((kb + 1) % LC_STAGES) * LC_STAGE_BYTES;              \
        sb = sa + LC_A_STAGE_BYTES;                                       \
    } while (0)
#endif
#define LC_MMA(ci, ag, ar, bg, br)                                                              \
    lc_mma(acc[ci], acc[ci + 1], acc[ci + 2], acc[ci + 3], af[ag][ar], af[ag][ar + 1],        \
           af[ag][ar + 2], af[ag][ar + 3], bf[bg][br], bf[bg][br + 1])

// The tile order: groups of LC_GROUP_M tile rows, column by column inside a group, so the CTAs
// running at once share A rows and B columns in L2.
__device__ __forceinline__ void lc_tile(int bid, int& tm, int& tn) {
    const int per_group = LC_GROUP_M * LC_TILES_N;
    const int g = bid / per_group;
    const int first = g * LC_GROUP_M;
    const int rows = min(LC_GROUP_M, LC_TILES_M - first);
    const int r = bid % per_group;
    tm = first + r % rows;
    tn = r / rows;
}

// A cp.async chunk of LC_CHUNK elements: 16 bytes through L2 only (.cg), or, where K is even
// but not a multiple of 8 (rows 4- or 8-byte aligned), 8 or 4 bytes (.ca, the only cache
// operator those sizes have). `src_bytes` 0 zero-fills (the source is not read).
#if LC_CHUNK == 8
#define LC_CP_CHUNK(dst, src, src_bytes) lc_cp_async16(dst, src, src_bytes)
#else
__device__ __forceinline__ void lc_cp_async_ca(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src),
                 "n"(2 * LC_CHUNK), "r"(src_bytes)
                 : "memory");
}
#define LC_CP_CHUNK(dst, src, src_bytes) lc_cp_async_ca(dst, src, src_bytes)
#endif

#if LC_REG_STAGED
// K is odd, so rows of A and B are not even 4-byte aligned and no cp.async can read them:
// chunk j of thread t (the plan's a_r / b_r values 8j..8j+7, 8 consecutive k) is
// read with LC_LD_ELEMS-element global loads (each aligned to its size and guarded as a whole,
// zeros outside the problem) into registers and written with one 16-byte shared store. The
// stores are plain st.shared: the barrier that makes a stage visible (after the cp.async wait,
// which then has no groups to wait for) orders them as it orders cp.async.
#if LC_LD_ELEMS == 1
typedef unsigned short lc_ld_t;
#elif LC_LD_ELEMS == 2
typedef unsigned lc_ld_t;
#else
typedef uint2 lc_ld_t;
#endif
union lc_chunk {
    lc_v4 v;
    lc_ld_t w[8 / LC_LD_ELEMS];
};
#define LC_STAGED_OPERAND(X, ROW0, CHUNKS, CP_ROW, CP_K, GUARD, GOFF, SWZ, SLIN, BASE)        \
    _Pragma("unroll") for (int j = 0; j < CHUNKS; ++j) {                                     \
        const int row = CP_ROW(t, j);                                                         \
        const int k = CP_K(t, j);                                                             \
        const long long grow = (long long)(ROW0) + row;                                        \
        lc_chunk x;                                                                           \
        _Pragma("unroll") for (int e = 0; e < 8; e += LC_LD_ELEMS) {                          \
            const int gk = k0 + k + e;                                                        \
            x.w[e / LC_LD_ELEMS] =                                                            \
                GUARD(grow, gk) ? *reinterpret_cast<const lc_ld_t*>(X + GOFF(grow, gk)) : lc_ld_t{}; \
        }                                                                                     \
        lc_st_shared_v4((BASE) + 2u * (unsigned)SWZ(SLIN(row, k)), x.v);                     \
    }
#endif

// Issues the loads of k-block [k0, k0 + LC_BK) into the stage at shared byte `stage`.
__device__ __forceinline__ void lc_load_stage(const lc_elem* __restrict__ A,
                                              const lc_elem* __restrict__ B, unsigned stage,
                                              int m0, int n0, int k0, int t) {
#if LC_REG_STAGED
    LC_STAGED_OPERAND(A, m0, LC_A_CHUNKS, LC_A_CP_ROW, LC_A_CP_K, LC_A_GUARD, LC_A_GOFF, lc_swz_a,
                      LC_A_SLIN, stage)
    LC_STAGED_OPERAND(B, n0, LC_B_CHUNKS, LC_B_CP_ROW, LC_B_CP_K, LC_B_GUARD, LC_B_GOFF, lc_swz_b,
                      LC_B_SLIN, stage + LC_A_STAGE_BYTES)
#else
    // Operand X's chunks. With LC_FAST_ADDR, where LC_FULL_X holds (X's tile and the k-block
    // lie inside the problem, validated), there is no guard and chunk j is chunk 0 plus
    // validated constants; elsewhere each chunk is guarded (zero-filled outside the problem).
#if LC_FAST_ADDR
#define LC_FAST_OPERAND(X, ROW0, CHUNKS, CP_ROW, CP_K, GOFF, SWZ, SLIN, SD, GD, BASE)           \
    {                                                                                          \
        const long long grow = (long long)(ROW0) + CP_ROW(t, 0);                                \
        const int k = CP_K(t, 0);                                                              \
        const lc_elem* src = X + GOFF(grow, k) + k0;                                            \
        const unsigned dst = (BASE) + 2u * (unsigned)SWZ(SLIN(CP_ROW(t, 0), k));               \
        _Pragma("unroll") for (int j = 0; j < CHUNKS; ++j)                                     \
            LC_CP_CHUNK(dst + (SD(j)), src + (GD(j)), 2u * LC_CHUNK);                          \
    }
#endif
#define LC_GUARDED_OPERAND(X, ROW0, CHUNKS, CP_ROW, CP_K, GUARD, GOFF, SWZ, SLIN, BASE)        \
    _Pragma("unroll") for (int j = 0; j < CHUNKS; ++j) {                                     \
        const int row = CP_ROW(t, j);                                                         \
        const int k = CP_K(t, j);                                                             \
        const long long grow = (long long)(ROW0) + row;                                        \
        const int gk = k0 + k;                                                                \
        const bool in = GUARD(grow, gk);                                                      \
        const lc_elem* src = in ? X + GOFF(grow, gk) : X;                                     \
        LC_CP_CHUNK((BASE) + 2u * (unsigned)SWZ(SLIN(row, k)), src, in ? 2u * LC_CHUNK : 0u);  \
    }
#if LC_FAST_ADDR
    if (LC_FULL_A(m0, k0)) {
        LC_FAST_OPERAND(A, m0, LC_A_CHUNKS, LC_A_CP_ROW, LC_A_CP_K, LC_A_GOFF, lc_swz_a, LC_A_SLIN,
                        LC_A_CP_SD, LC_A_CP_GD, stage)
    } else
#endif
    {
        LC_GUARDED_OPERAND(A, m0, LC_A_CHUNKS, LC_A_CP_ROW, LC_A_CP_K, LC_A_GUARD, LC_A_GOFF,
                           lc_swz_a, LC_A_SLIN, stage)
    }
#if LC_FAST_ADDR
    if (LC_FULL_B(n0, k0)) {
        LC_FAST_OPERAND(B, n0, LC_B_CHUNKS, LC_B_CP_ROW, LC_B_CP_K, LC_B_GOFF, lc_swz_b, LC_B_SLIN,
                        LC_B_CP_SD, LC_B_CP_GD, stage + LC_A_STAGE_BYTES)
    } else
#endif
    {
        LC_GUARDED_OPERAND(B, n0, LC_B_CHUNKS, LC_B_CP_ROW, LC_B_CP_K, LC_B_GUARD, LC_B_GOFF,
                           lc_swz_b, LC_B_SLIN, stage + LC_A_STAGE_BYTES)
    }
#endif
}

extern "C" __global__ void __launch_bounds__(LC_THREADS, 1)
    laycert_gemm(const lc_elem* __restrict__ A, const lc_elem* __restrict__ B,
                 lc_elem* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char lc_dyn_smem[];
    const unsigned base = (lc_smem_addr(lc_dyn_smem) + 1023u) & ~1023u;
    const int t = threadIdx.x;
    int tm, tn;
    lc_tile(blockIdx.x, tm, tn);
    const int m0 = tm * LC_BM;
    const int n0 = tn * LC_BN;
    const int kblocks = (LC_K + LC_BK - 1) / LC_BK;

#if LC_FAST_LDSM
    // Byte offsets (within a stage's a_s / b_s) of the rows this lane addresses for ldmatrix
    // group 0 (LC_LDSM_A/B derive every other group's).
    const unsigned a_lo0 = 2u * (unsigned)lc_swz_a(LC_A_SLIN(LC_A_LDSM_ROW(t, 0), LC_A_LDSM_K(t, 0)));
    const unsigned b_lo0 = 2u * (unsigned)lc_swz_b(LC_B_SLIN(LC_B_LDSM_ROW(t, 0), LC_B_LDSM_K(t, 0)));
#else
    // Byte offsets (within a stage's a_s / b_s) of the rows this lane addresses for ldmatrix.
    unsigned a_lo[LC_A_GROUPS], b_lo[LC_B_GROUPS];
#pragma unroll
    for (int g = 0; g < LC_A_GROUPS; ++g) {
        const int r = LC_A_LDSM_ROW(t, g);
        const int k = LC_A_LDSM_K(t, g);
        a_lo[g] = 2u * (unsigned)lc_swz_a(LC_A_SLIN(r, k));
    }
#pragma unroll
    for (int g = 0; g < LC_B_GROUPS; ++g) {
        const int r = LC_B_LDSM_ROW(t, g);
        const int k = LC_B_LDSM_K(t, g);
        b_lo[g] = 2u * (unsigned)lc_swz_b(LC_B_SLIN(r, k));
    }
#endif

    float acc[LC_ACC];
#pragma unroll
    for (int i = 0; i < LC_ACC; ++i) acc[i] = 0.0f;
    unsigned af[LC_A_GROUPS][4];
    unsigned bf[LC_B_GROUPS][4];

#pragma unroll
    for (int s = 0; s < LC_STAGES - 1; ++s) {
        if (s < kblocks) lc_load_stage(A, B, base + s * LC_STAGE_BYTES, m0, n0, s * LC_BK, t);
        lc_cp_commit();
    }
#if LC_PIPELINED
    // k-block 0 landed; its first fragments (LC_PRELOAD). In iteration kb, LC_NEXT_STAGE loads
    // k-block kb + LC_STAGES - 1 into the stage of k-block kb - 1, whose last reads came before
    // iteration kb - 1's LC_ADVANCE barrier; LC_ADVANCE switches to k-block kb + 1 before the
    // last k-step's mma and reloads LC_PRELOAD's groups from it (validated: the last k-step
    // reads none of them).
    lc_cp_wait<LC_STAGES - 2>();
    __syncthreads();
    unsigned sa = base, sb = base + LC_A_STAGE_BYTES;
    LC_PRELOAD
    for (int kb = 0; kb < kblocks; ++kb) {
        const int nk = kb + LC_STAGES - 1;
        LC_SCHEDULE
    }
#else
    for (int kb = 0; kb < kblocks; ++kb) {
        lc_cp_wait<LC_STAGES - 2>();
        __syncthreads();
        const unsigned sa = base + (kb % LC_STAGES) * LC_STAGE_BYTES;
        const unsigned sb = sa + LC_A_STAGE_BYTES;
        // LC_NEXT_STAGE (once, inside the schedule): k-block kb + LC_STAGES - 1 into the stage
        // read in iteration kb - 1, free since every warp passed the barrier above.
        const int nk = kb + LC_STAGES - 1;
        LC_SCHEDULE
    }
#endif
    lc_cp_wait<0>();
    __syncthreads();

    // Epilogue: accumulator pairs (v, v + 1) are adjacent columns of one row (validated).
#pragma unroll
    for (int v = 0; v < LC_ACC; v += 2) {
        const int r = LC_C_ROW(t, v);
        const int c = LC_C_COL(t, v);
        lc_st_shared_u32(base + 2u * (unsigned)lc_swz_h(LC_H_SLIN(r, c)), lc_pack(acc[v], acc[v + 1]));
    }
    __syncthreads();
#pragma unroll
    for (int v = 0; v < LC_O_VALUES; v += 8) {
        const int r = LC_O_ROW(t, v);
        const int c = LC_O_COL(t, v);
        const lc_v4 x = lc_ld_shared_v4(base + 2u * (unsigned)lc_swz_h(LC_H_SLIN(r, c)));
        const long long grow = (long long)m0 + r;
        const int gcol = n0 + c;
#if LC_N % 8 == 0
        if (LC_C_GUARD(grow, gcol)) lc_st_global_v4(C + LC_C_GOFF(grow, gcol), x);
#else
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const int gc = gcol + e;
            if (LC_C_GUARD(grow, gc)) C[LC_C_GOFF(grow, gc)] = lc_v4_elem(x, e);
        }
#endif
    }
}
