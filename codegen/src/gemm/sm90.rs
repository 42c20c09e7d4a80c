//! The sm90 GEMM: TMA + `wgmma` + warp specialization (see `sm90_body.cu` for the kernel).
//!
//! The plan-dependent text is generated here: the constants of the configuration, the
//! accumulator index expressions (from the plan's accumulator layout, in the wgmma register
//! order), the global offset and store guard of C, the GMMA shared-memory descriptor, the
//! `wgmma` wrapper for the plan's instruction, and a host launcher for nvcc builds. Every
//! expression is validated ([`super::validate`]) before the text is returned.

use std::fmt::Write as _;

use solver::synth::Plan;

use super::validate::{self, EmittedText};
use super::{
    check_capacity_claim, plan_summary, smem_line, GemmConfig, GemmDtype, GemmKernel, GemmSpec,
};
use crate::error::CodegenError;

/// The kernel body shared by every sm90 plan.
pub const BODY: &str = include_str!("sm90_body.cu");

/// The descriptor's constant fields for k-blocks of `bk` 2-byte elements (rows of `2 bk`
/// bytes, the swizzle width): LBO 16 bytes (unused by swizzled K-major layouts, encoded 1), SBO
/// = 8 rows (encoded >> 4), layout type (bits 62-63) 1 = 128-byte swizzle, 2 = 64-byte,
/// base offset 0 (the stage buffers are 1024-byte aligned).
pub fn descriptor_constant(bk: i64) -> u64 {
    let row = (2 * bk) as u64;
    let mode: u64 = if row == 128 { 1 } else { 2 };
    (1 << 16) | (((8 * row) >> 4) << 32) | (mode << 62)
}

/// Registers the producer warpgroup keeps (`setmaxnreg.dec`).
pub const PRODUCER_REGS: i64 = 40;

/// Registers the consumer warpgroups get (`setmaxnreg.inc`): what the register file (64 Ki)
/// leaves after the producer, rounded down to a multiple of 8, at most 240.
pub fn consumer_regs(consumers: i64) -> i64 {
    let left = (65536 - 128 * PRODUCER_REGS) / (128 * consumers);
    (left / 8 * 8).min(240)
}

/// The instruction the plan chose for the mma, which the body must implement.
fn check_plan(c: &GemmConfig, plan: &Plan) -> Result<String, CodegenError> {
    let p = &plan.program;
    let mma = p
        .ops
        .iter()
        .position(|o| o.kind.name() == "mma")
        .ok_or_else(|| CodegenError::Gemm("the plan has no mma".into()))?;
    let instr = plan.chosen[mma].instruction.clone();
    let want = format!("m64n{}k16", c.bn);
    if !(instr.starts_with("wgmma") && instr.contains(&want) && instr.contains("A from shared")) {
        return Err(CodegenError::Gemm(format!(
            "synthesis chose {instr:?} for the mma; the sm90 body implements wgmma {want} with \
             both operands from shared memory"
        )));
    }
    Ok(instr)
}

fn wgmma_wrapper(c: &GemmConfig, dtype: GemmDtype) -> String {
    let regs = c.bn / 2;
    let t = match dtype {
        GemmDtype::F16 => "f16",
        GemmDtype::Bf16 => "bf16",
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// wgmma.mma_async m64n{n}k16, f32 += {t} x {t}, A and B from shared memory (K-major: \
         no transpose), D scaled by 0 on the first k-step of a tile.",
        n = c.bn
    );
    let _ = writeln!(
        s,
        "__device__ __forceinline__ void lc_wgmma(float (&d)[{regs}], unsigned long long da, \
         unsigned long long db, int scale_d) {{"
    );
    let outs: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
    let _ = writeln!(s, "    asm volatile(");
    let _ = writeln!(
        s,
        "        \"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{}, 0;\\n\"",
        regs + 2
    );
    let _ = writeln!(
        s,
        "        \"wgmma.mma_async.sync.aligned.m64n{}k16.f32.{t}.{t} {{{}}}, %{}, %{}, p, 1, 1, 0, 0;\\n}}\"",
        c.bn,
        outs.join(", "),
        regs,
        regs + 1
    );
    let ins: Vec<String> = (0..regs).map(|i| format!("\"+f\"(d[{i}])")).collect();
    let _ = writeln!(s, "        : {}", ins.join(", "));
    let _ = writeln!(s, "        : \"l\"(da), \"l\"(db), \"r\"(scale_d));");
    let _ = writeln!(s, "}}");
    s
}

fn host_launcher(spec: &GemmSpec, c: &GemmConfig) -> String {
    let dt = match spec.dtype {
        GemmDtype::F16 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
        GemmDtype::Bf16 => "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
    };
    format!(
        r#"
#ifdef LAYCERT_HOST_LAUNCHER
// Host launcher for nvcc builds (`nvcc -arch=sm_90a -DLAYCERT_HOST_LAUNCHER -shared ... -lcuda`):
// builds the two tensor maps (SWIZZLE_{sw}B boxes of {bk} x rows, zero fill out of bounds) and
// launches the persistent grid on the co-resident clusters.
#include <cuda.h>
#include <cuda_runtime.h>
static int lc_encode(CUtensorMap* map, const void* ptr, unsigned long long rows, unsigned rows_box) {{
    cuuint64_t dims[2] = {{(cuuint64_t)LC_K, (cuuint64_t)rows}};
    cuuint64_t strides[1] = {{(cuuint64_t)LC_K * 2}};
    cuuint32_t box[2] = {{(cuuint32_t)LC_BK, rows_box}};
    cuuint32_t estr[2] = {{1, 1}};
    return (int)cuTensorMapEncodeTiled(map, {dt}, 2, const_cast<void*>(ptr), dims, strides, box,
        estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_{sw}B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}}
static int grid_size = 0;
static float* ws = nullptr;          // split-K partials (LC_WS_FLOATS words)
static unsigned* counters = nullptr; // split-K arrivals per tile (LC_SPLITS per launch)
static unsigned epoch = 0;           // launches so far
extern "C" int laycert_gemm_launch(const void* A, const void* B, void* C, void* stream) {{
    CUtensorMap ma, mb;
    int e = lc_encode(&ma, A, LC_M, LC_BM);
    if (e) return 1000 + e;
    e = lc_encode(&mb, B, LC_N, LC_BN / LC_CLUSTER);
    if (e) return 2000 + e;
    if (!grid_size) {{
        if (cudaFuncSetAttribute(laycert_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 LC_SMEM_BYTES)) return 3000;
        cudaLaunchConfig_t cfg = {{}};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = LC_CLUSTER; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(LC_CLUSTER * 1024); cfg.blockDim = dim3(LC_THREADS);
        cfg.dynamicSmemBytes = LC_SMEM_BYTES; cfg.attrs = attr; cfg.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, laycert_gemm, &cfg) || clusters < 1) return 4000;
        const long long items = (long long)LC_TILES / LC_CLUSTER * LC_SPLITS;
        // Split-K waits for every split of a tile: all items must be co-resident.
        if (LC_SPLITS > 1 && items > clusters) return 6000;
        grid_size = (int)((items < clusters ? items : clusters) * LC_CLUSTER);
        if (LC_SPLITS > 1) {{
            if (cudaMalloc(&ws, sizeof(float) * (size_t)LC_WS_FLOATS)) return 5000;
            if (cudaMalloc(&counters, sizeof(unsigned) * (size_t)LC_TILES)) return 5001;
            if (cudaMemset(counters, 0, sizeof(unsigned) * (size_t)LC_TILES)) return 5002;
        }}
    }}
    laycert_gemm<<<grid_size, LC_THREADS, LC_SMEM_BYTES, (cudaStream_t)stream>>>(
        (lc_elem*)C, *reinterpret_cast<lc_tensor_map*>(&ma), *reinterpret_cast<lc_tensor_map*>(&mb),
        ws, counters, ++epoch);
    return (int)cudaGetLastError();
}}
extern "C" int laycert_gemm_grid() {{ return grid_size; }}
#ifdef LC_PROFILE
extern "C" int laycert_gemm_profile(unsigned long long* out, int reset) {{
    if (reset) {{ static unsigned long long zero[4096 * 8]; return (int)cudaMemcpyToSymbol(lc_prof, zero, sizeof(zero)); }}
    return (int)cudaMemcpyFromSymbol(out, lc_prof, sizeof(unsigned long long) * 4096 * 8);
}}
#endif
#endif
"#,
        bk = c.bk,
        sw = 2 * c.bk
    )
}

/// The plan-dependent expressions, exactly as printed into the kernel.
pub fn emitted_text(spec: &GemmSpec, c: &GemmConfig) -> EmittedText {
    EmittedText {
        acc_row: "(tid / 32) * 16 + (tid % 32) / 4 + ((i / 2) % 2) * 8".into(),
        acc_col: "(i / 4) * 8 + (tid % 4) * 2 + i % 2".into(),
        c_offset: format!("row * {} + col", spec.n),
        store_guard: format!("row < {} && col < {}", spec.m, spec.n),
        descriptor: format!("0x{:016x}ull", descriptor_constant(c.bk)),
        kb_begin: format!("split * {}", c.kb_per_split(spec)),
        kb_end: format!("(split + 1) * {}", c.kb_per_split(spec)),
        red_begin: format!("split * {}", c.reduce_words()),
        ws_index: format!(
            "((tile * {} + split) * {} + thread) * {} + i",
            c.splits,
            128 * c.consumers,
            c.bn / 2
        ),
    }
}

/// Emits the sm90 kernel for a synthesized plan.
pub fn emit(spec: &GemmSpec, c: &GemmConfig, plan: &Plan) -> Result<GemmKernel, CodegenError> {
    check_capacity_claim(plan, c.smem_bytes(), spec.smem_budget())?;
    let instr = check_plan(c, plan)?;
    let text = emitted_text(spec, c);
    let validation = validate::validate_sm90(spec, c, plan, &text)?;
    let digest = plan.certificate.digest.clone();
    let summary = plan_summary(plan);
    let regs = c.bn / 2;
    let elem = spec.dtype.name();
    let mut k = String::new();
    let _ = writeln!(
        k,
        "// laycert gemm (sm90): C[{m},{n}] = A[{m},{k}] * B[{n},{k}]^T, {elem} operands, f32 \
         accumulation, {elem} C.\n\
         // Global layouts: A ({m},{k}):({k},1)  B ({n},{k}):({k},1)  C ({m},{n}):({n},1).\n\
         // CTA: {bm}x{bn}x{bk} tile, {cons} consumer warpgroup(s) + 1 producer, {st} stages, \
         clusters of {cl} along M (B multicast), persistent, group-M {g}, split-K {sp}.\n\
         // {smem}\n\
         // Synthesized plan ({prog}; certificate digest {digest}):",
        m = spec.m,
        n = spec.n,
        k = spec.k,
        bm = c.bm,
        bn = c.bn,
        bk = c.bk,
        cons = c.consumers,
        st = c.stages,
        cl = c.cluster,
        g = c.group_m,
        sp = c.splits,
        smem = smem_line(
            c.smem_bytes(),
            &format!(
                "{} stages of {} bytes; 1024 bytes of alignment slack",
                c.stages,
                c.a_stage_bytes() + c.b_stage_bytes()
            ),
            "sm90",
            spec.smem_budget(),
            spec.target.smem_limit(),
        ),
        prog = plan.program.name,
    );
    for line in &summary {
        let _ = writeln!(k, "//   {line}");
    }
    for (id, l) in plan.memory.iter().enumerate() {
        if let Some(l) = l {
            let t = &plan.program.tensors[id];
            if t.scope.name() == "shared" {
                let _ = writeln!(k, "//   shared {} = {}", t.name, validate::show(l));
            }
        }
    }
    let _ = writeln!(
        k,
        "// Translation validation: {} accumulator cells, {} global offsets, {} guard points, {} \
         split-K k-blocks and workspace words, {} shared-memory cells (TMA SWIZZLE_{}B writes = wgmma descriptor reads = the plan).",
        validation.accumulator_cells,
        validation.global_offsets,
        validation.guard_points,
        validation.split_points,
        validation.smem_cells,
        2 * c.bk
    );
    let _ = writeln!(k, "\ntypedef unsigned short lc_elem;  // {elem} bits");
    for (name, v) in [
        ("LC_M", spec.m),
        ("LC_N", spec.n),
        ("LC_K", spec.k),
        ("LC_BM", c.bm),
        ("LC_BN", c.bn),
        ("LC_BK", c.bk),
        ("LC_STAGES", c.stages),
        ("LC_CONSUMERS", c.consumers),
        ("LC_CLUSTER", c.cluster),
        ("LC_GROUP_M", c.group_m),
        ("LC_SPLITS", c.splits),
        ("LC_TILES", c.tiles(spec) / c.cluster * c.cluster),
        ("LC_WS_FLOATS", c.workspace_floats(spec)),
        ("LC_THREADS", c.threads()),
        ("LC_A_STAGE_BYTES", c.a_stage_bytes()),
        ("LC_B_STAGE_BYTES", c.b_stage_bytes()),
        ("LC_ROW_BYTES", c.bk * 2),
        ("LC_ACC_REGS", regs),
        ("LC_SMEM_BYTES", c.smem_bytes()),
    ] {
        let _ = writeln!(k, "#define {name} {v}");
    }
    let _ = writeln!(
        k,
        "// Plan-dependent index functions: their bodies are the validated expressions (functions,\n\
         // not macros, so every argument is one value). Accumulator register i of thread tid of a\n\
         // consumer warpgroup (the plan's layout of c restricted to one warpgroup, in\n\
         // {instr} register order):\n\
         __device__ __forceinline__ long long lc_acc_row(long long tid, long long i) {{ return {}; }}\n\
         __device__ __forceinline__ long long lc_acc_col(long long tid, long long i) {{ return {}; }}\n\
         // C's global offset and the store guard\n\
         __device__ __forceinline__ long long lc_c_offset(long long row, long long col) {{ return {}; }}\n\
         __device__ __forceinline__ bool lc_store_guard(long long row, long long col) {{ return {}; }}\n\
         // split-K: the k-block range of a split, the workspace word of a partial, the slice a split reduces\n\
         __device__ __forceinline__ long long lc_kb_begin(long long split) {{ return {}; }}\n\
         __device__ __forceinline__ long long lc_kb_end(long long split) {{ return {}; }}\n\
         __device__ __forceinline__ long long lc_ws_index(long long tile, long long split, long long thread, long long i) {{ return {}; }}\n\
         __device__ __forceinline__ long long lc_red_begin(long long split) {{ return {}; }}\n\
         #define LC_RED_WORDS {}",
        text.acc_row,
        text.acc_col,
        text.c_offset,
        text.store_guard,
        text.kb_begin,
        text.kb_end,
        text.ws_index,
        text.red_begin,
        c.reduce_words()
    );
    let _ = writeln!(
        k,
        "// GMMA shared-memory descriptor: start address >> 4 in bits 0-13; LBO 16 B; SBO {} B; \
         {}-byte swizzle.\n\
         __device__ __forceinline__ unsigned long long lc_desc(unsigned addr) {{\n    \
         return (unsigned long long)((addr & 0x3FFFF) >> 4) | {};\n}}",
        16 * c.bk,
        2 * c.bk,
        text.descriptor
    );
    let _ = writeln!(
        k,
        "__device__ __forceinline__ void lc_consumer_regs() {{ asm volatile(\"setmaxnreg.inc.sync.aligned.u32 {};\"); }}\n\
         __device__ __forceinline__ void lc_producer_regs() {{ asm volatile(\"setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGS};\"); }}",
        consumer_regs(c.consumers)
    );
    let cvt = match spec.dtype {
        GemmDtype::F16 => "f16",
        GemmDtype::Bf16 => "bf16",
    };
    let _ = writeln!(
        k,
        "// Converts and stores C[off] = x and, when `both`, C[off + 1] = y (a 4-byte store when \
         the offset is even).\n\
         __device__ __forceinline__ void lc_store_pair(lc_elem* C, long long off, float x, float y, bool both) {{\n    \
         if (both && (off & 1) == 0) {{\n        unsigned r;\n        \
         asm(\"cvt.rn.{cvt}x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(y), \"f\"(x));\n        \
         *reinterpret_cast<unsigned*>(C + off) = r;\n        return;\n    }}\n    \
         unsigned short h;\n    asm(\"cvt.rn.{cvt}.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x));\n    C[off] = h;\n    \
         if (both) {{\n        asm(\"cvt.rn.{cvt}.f32 %0, %1;\" : \"=h\"(h) : \"f\"(y));\n        C[off + 1] = h;\n    }}\n}}"
    );
    k += &wgmma_wrapper(c, spec.dtype);
    k += "\n";
    k += BODY;
    k += &host_launcher(spec, c);
    let (source, cert) = super::bind_gemm(&plan.certificate, spec, c, true, &k)?;
    Ok(GemmKernel {
        spec: *spec,
        config: *c,
        source,
        entry: "laycert_gemm",
        digest: cert.digest.clone(),
        plan_summary: summary,
        threads: c.threads(),
        smem_bytes: c.smem_bytes(),
        validation,
        certificate_json: cert.to_json(),
        note: None,
    })
}
