// ---------------------------------------------------------------------------------------------
// sm80 PTX helpers (codegen/src/gemm/ptx_sm80.cu), shared by the sm80 GEMM and W4A16 bodies:
// cp.async into shared memory, its groups, ldmatrix.x4, a 16-byte register vector and its
// shared-memory load and store.
// ---------------------------------------------------------------------------------------------

struct __align__(16) lc_v4 {
    unsigned x, y, z, w;
};

__device__ __forceinline__ unsigned lc_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
// 16 bytes global -> shared; `src_bytes` 16 copies, 0 zero-fills (the source is not read).
__device__ __forceinline__ void lc_cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void lc_cp_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void lc_cp_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ lc_v4 lc_ld_shared_v4(unsigned addr) {
    lc_v4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
__device__ __forceinline__ void lc_st_shared_v4(unsigned addr, lc_v4 v) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}
__device__ __forceinline__ void lc_ldsm_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
