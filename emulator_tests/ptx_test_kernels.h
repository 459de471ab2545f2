/* The instruction kernels of ptx_interp_test.c, also fed to ptxas by ptx_ptxas_test.c (header-only). Each kernel is
 * PTK_HEAD + body + PTK_TAIL: thread i loads the pair in[2i], in[2i+1] (ld.global.v2.u64) into %rd5 and %rd7, the
 * body computes %rd6 from them, and out[i] = %rd6. Bodies take their float operands from the low bits (%f1/%f2 from
 * %rd5/%rd7, %fd1/%fd2, %rs1/%rs2) and leave f32 results in %f3, f64 in %fd3, 16-bit in %rs3, 32-bit in %r5. */
#ifndef HCQ_EMU_PTX_TEST_KERNELS_H
#define HCQ_EMU_PTX_TEST_KERNELS_H

#define PTK_HEAD                                                                                               \
  "//\n// instruction test kernel\n//\n.version 7.8\n.target sm_90\n.address_size 64\n\n"                     \
  ".visible .entry t(\n\t.param .u64 pin,\n\t.param .u64 pout\n)\n.maxntid 64, 1, 1\n{\n"                    \
  "\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;\n\t.reg .f32 %f<8>;\n\t.reg .f64 %fd<8>;\n" \
  "\t.reg .pred %p<4>;\n"                                                                                      \
  "\tld.param.u64 %rd0, [pin];\n\tld.param.u64 %rd1, [pout];\n\tcvta.to.global.u64 %rd0, %rd0;\n"             \
  "\tcvta.to.global.u64 %rd1, %rd1;\n\tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, %ctaid.x;\n"                      \
  "\tmov.u32 %r2, %ntid.x;\n\tmad.lo.s32 %r0, %r1, %r2, %r0;\n\tmul.wide.u32 %rd2, %r0, 16;\n"                \
  "\tadd.s64 %rd3, %rd0, %rd2;\n\tld.global.v2.u64 {%rd5, %rd7}, [%rd3];\n\tmul.wide.u32 %rd2, %r0, 8;\n"     \
  "\tadd.s64 %rd4, %rd1, %rd2;\n"                                                                              \
  "\tcvt.u32.u64 %r3, %rd5;\n\tcvt.u32.u64 %r4, %rd7;\n\tmov.b32 %f1, %r3;\n\tmov.b32 %f2, %r4;\n"             \
  "\tmov.b64 %fd1, %rd5;\n\tmov.b64 %fd2, %rd7;\n\tcvt.u16.u64 %rs1, %rd5;\n\tcvt.u16.u64 %rs2, %rd7;\n"
#define PTK_TAIL "\tst.global.u64 [%rd4], %rd6;\n\tret;\n}\n"

/* result moves */
#define OUT_F32 "\tmov.b32 %r5, %f3;\n\tcvt.u64.u32 %rd6, %r5;\n"
#define OUT_F64 "\tmov.b64 %rd6, %fd3;\n"
#define OUT_B16 "\tcvt.u64.u16 %rd6, %rs3;\n"
#define OUT_R32 "\tcvt.u64.u32 %rd6, %r5;\n"

/* Input classes the test draws for a kernel. */
typedef enum ptk_in { IN_F32, IN_F64, IN_I64, IN_I32, IN_F16, IN_BF16, IN_F16MID, IN_F16MID64 } ptk_in;

typedef struct ptk_kernel {
  const char *name; /* the instruction under test */
  const char *body;
  ptk_in in;
} ptk_kernel;

static const ptk_kernel PTK_KERNELS[] = {
    /* narrowing float conversions, every rounding modifier (PTX ISA "cvt") */
    {"cvt.rn.f16.f32", "\tcvt.rn.f16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rz.f16.f32", "\tcvt.rz.f16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rm.f16.f32", "\tcvt.rm.f16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rp.f16.f32", "\tcvt.rp.f16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rn.bf16.f32", "\tcvt.rn.bf16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rz.bf16.f32", "\tcvt.rz.bf16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rm.bf16.f32", "\tcvt.rm.bf16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rp.bf16.f32", "\tcvt.rp.bf16.f32 %rs3, %f1;\n" OUT_B16, IN_F16MID},
    {"cvt.rn.f16.f64", "\tcvt.rn.f16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rz.f16.f64", "\tcvt.rz.f16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rm.f16.f64", "\tcvt.rm.f16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rp.f16.f64", "\tcvt.rp.f16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rn.bf16.f64", "\tcvt.rn.bf16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rp.bf16.f64", "\tcvt.rp.bf16.f64 %rs3, %fd1;\n" OUT_B16, IN_F16MID64},
    {"cvt.rn.f32.f64", "\tcvt.rn.f32.f64 %f3, %fd1;\n" OUT_F32, IN_F64},
    {"cvt.rz.f32.f64", "\tcvt.rz.f32.f64 %f3, %fd1;\n" OUT_F32, IN_F64},
    {"cvt.rm.f32.f64", "\tcvt.rm.f32.f64 %f3, %fd1;\n" OUT_F32, IN_F64},
    {"cvt.rp.f32.f64", "\tcvt.rp.f32.f64 %f3, %fd1;\n" OUT_F32, IN_F64},
    /* widening: exact */
    {"cvt.f32.f16", "\tcvt.f32.f16 %f3, %rs1;\n" OUT_F32, IN_F16},
    {"cvt.f32.bf16", "\tcvt.f32.bf16 %f3, %rs1;\n" OUT_F32, IN_BF16},
    {"cvt.f64.f32", "\tcvt.f64.f32 %fd3, %f1;\n" OUT_F64, IN_F32},
    /* integer -> float */
    {"cvt.rn.f32.s64", "\tcvt.rn.f32.s64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rz.f32.s64", "\tcvt.rz.f32.s64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rm.f32.s64", "\tcvt.rm.f32.s64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rp.f32.s64", "\tcvt.rp.f32.s64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rn.f32.u64", "\tcvt.rn.f32.u64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rm.f32.u64", "\tcvt.rm.f32.u64 %f3, %rd5;\n" OUT_F32, IN_I64},
    {"cvt.rn.f32.s32", "\tcvt.rn.f32.s32 %f3, %r3;\n" OUT_F32, IN_I32},
    {"cvt.rp.f32.u32", "\tcvt.rp.f32.u32 %f3, %r3;\n" OUT_F32, IN_I32},
    {"cvt.rn.f64.s64", "\tcvt.rn.f64.s64 %fd3, %rd5;\n" OUT_F64, IN_I64},
    {"cvt.rz.f64.u64", "\tcvt.rz.f64.u64 %fd3, %rd5;\n" OUT_F64, IN_I64},
    {"cvt.rn.f16.s32", "\tcvt.rn.f16.s32 %rs3, %r3;\n" OUT_B16, IN_I32},
    /* float -> integer: saturating, NaN -> 0 */
    {"cvt.rni.s32.f32", "\tcvt.rni.s32.f32 %r5, %f1;\n" OUT_R32, IN_F32},
    {"cvt.rzi.s32.f32", "\tcvt.rzi.s32.f32 %r5, %f1;\n" OUT_R32, IN_F32},
    {"cvt.rmi.s32.f32", "\tcvt.rmi.s32.f32 %r5, %f1;\n" OUT_R32, IN_F32},
    {"cvt.rpi.s32.f32", "\tcvt.rpi.s32.f32 %r5, %f1;\n" OUT_R32, IN_F32},
    {"cvt.rni.u32.f32", "\tcvt.rni.u32.f32 %r5, %f1;\n" OUT_R32, IN_F32},
    {"cvt.rzi.s64.f64", "\tcvt.rzi.s64.f64 %rd6, %fd1;\n", IN_F64},
    {"cvt.rzi.u64.f64", "\tcvt.rzi.u64.f64 %rd6, %fd1;\n", IN_F64},
    {"cvt.rzi.s16.f32", "\tcvt.rzi.s16.f32 %rs3, %f1;\n\tcvt.s64.s16 %rd6, %rs3;\n", IN_F32},
    /* float -> same float */
    {"cvt.rni.f32.f32", "\tcvt.rni.f32.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"cvt.rmi.f64.f64", "\tcvt.rmi.f64.f64 %fd3, %fd1;\n" OUT_F64, IN_F64},
    {"cvt.sat.f32.f32", "\tcvt.sat.f32.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"cvt.ftz.f32.f32", "\tcvt.ftz.f32.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    /* integer -> integer */
    {"cvt.s16.s8", "\tcvt.s16.s8 %rs3, %rs1;\n\tcvt.u64.u16 %rd6, %rs3;\n", IN_I64},
    {"cvt.sat.u8.s32", "\tcvt.sat.u8.s32 %r5, %r3;\n" OUT_R32, IN_I32},
    {"cvt.sat.s16.s64", "\tcvt.sat.s16.s64 %rs3, %rd5;\n" OUT_B16, IN_I64},
    {"cvt.s64.s32", "\tcvt.s64.s32 %rd6, %r3;\n", IN_I32},
    /* integer arithmetic (PTX ISA "Integer Arithmetic Instructions") */
    {"div.s32", "\tdiv.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"div.u32", "\tdiv.u32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"rem.s32", "\trem.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"rem.u32", "\trem.u32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"div.s64", "\tdiv.s64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"rem.u64", "\trem.u64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"shl.b32", "\tshl.b32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"shr.s32", "\tshr.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"shr.u32", "\tshr.u32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"shl.b64", "\tshl.b64 %rd6, %rd5, %r4;\n", IN_I64},
    {"shr.s64", "\tshr.s64 %rd6, %rd5, %r4;\n", IN_I64},
    {"shr.u16", "\tshr.u16 %rs3, %rs1, %r4;\n" OUT_B16, IN_I32},
    {"mul.hi.s32", "\tmul.hi.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"mul.hi.u32", "\tmul.hi.u32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"mul.hi.s64", "\tmul.hi.s64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"mul.hi.u64", "\tmul.hi.u64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"mul.wide.s32", "\tmul.wide.s32 %rd6, %r3, %r4;\n", IN_I32},
    {"mul.wide.u32", "\tmul.wide.u32 %rd6, %r3, %r4;\n", IN_I32},
    {"mul.lo.s64", "\tmul.lo.s64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"mad.lo.s32", "\tmad.lo.s32 %r5, %r3, %r4, %r3;\n" OUT_R32, IN_I32},
    {"add.sat.s32", "\tadd.sat.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"sub.s16", "\tsub.s16 %rs3, %rs1, %rs2;\n" OUT_B16, IN_I32},
    {"min.s32", "\tmin.s32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"max.u32", "\tmax.u32 %r5, %r3, %r4;\n" OUT_R32, IN_I32},
    {"max.s64", "\tmax.s64 %rd6, %rd5, %rd7;\n", IN_I64},
    {"neg.s32", "\tneg.s32 %r5, %r3;\n" OUT_R32, IN_I32},
    {"abs.s32", "\tabs.s32 %r5, %r3;\n" OUT_R32, IN_I32},
    {"not.b32", "\tnot.b32 %r5, %r3;\n" OUT_R32, IN_I32},
    {"setp.lt.s32", "\tsetp.lt.s32 %p1, %r3, %r4;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_I32},
    {"setp.hi.u32", "\tsetp.hi.u32 %p1, %r3, %r4;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_I32},
    {"setp.ge.s64", "\tsetp.ge.s64 %p1|%p2, %rd5, %rd7;\n\tselp.u32 %r5, 1, 2, %p2;\n" OUT_R32, IN_I64},
    /* float arithmetic (PTX ISA "Floating Point Instructions") */
    {"add.rn.f32", "\tadd.rn.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"add.rz.f32", "\tadd.rz.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"sub.rm.f32", "\tsub.rm.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"mul.rp.f32", "\tmul.rp.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"mul.rn.f32", "\tmul.rn.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"fma.rn.f32", "\tfma.rn.f32 %f3, %f1, %f2, %f1;\n" OUT_F32, IN_F32},
    {"fma.rz.f32", "\tfma.rz.f32 %f3, %f1, %f2, %f2;\n" OUT_F32, IN_F32},
    {"mad.rn.f32", "\tmad.rn.f32 %f3, %f1, %f2, %f2;\n" OUT_F32, IN_F32},
    {"div.rn.f32", "\tdiv.rn.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"div.rp.f32", "\tdiv.rp.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"div.full.f32", "\tdiv.full.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"div.approx.f32", "\tdiv.approx.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"sqrt.rn.f32", "\tsqrt.rn.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"sqrt.rm.f32", "\tsqrt.rm.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"sqrt.approx.f32", "\tsqrt.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"rcp.rn.f32", "\trcp.rn.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"rcp.approx.f32", "\trcp.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"add.rn.f64", "\tadd.rn.f64 %fd3, %fd1, %fd2;\n" OUT_F64, IN_F64},
    {"div.rn.f64", "\tdiv.rn.f64 %fd3, %fd1, %fd2;\n" OUT_F64, IN_F64},
    {"fma.rn.f64", "\tfma.rn.f64 %fd3, %fd1, %fd2, %fd1;\n" OUT_F64, IN_F64},
    {"sqrt.rn.f64", "\tsqrt.rn.f64 %fd3, %fd1;\n" OUT_F64, IN_F64},
    {"rcp.rn.f64", "\trcp.rn.f64 %fd3, %fd1;\n" OUT_F64, IN_F64},
    {"neg.f32", "\tneg.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"abs.f64", "\tabs.f64 %fd3, %fd1;\n" OUT_F64, IN_F64},
    {"min.f32", "\tmin.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"max.f32", "\tmax.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"max.NaN.f32", "\tmax.NaN.f32 %f3, %f1, %f2;\n" OUT_F32, IN_F32},
    {"min.f64", "\tmin.f64 %fd3, %fd1, %fd2;\n" OUT_F64, IN_F64},
    {"setp.lt.f32", "\tsetp.lt.f32 %p1, %f1, %f2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F32},
    {"setp.ltu.f32", "\tsetp.ltu.f32 %p1, %f1, %f2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F32},
    {"setp.neu.f32", "\tsetp.neu.f32 %p1, %f1, %f2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F32},
    {"setp.eq.f64", "\tsetp.eq.f64 %p1, %fd1, %fd2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F64},
    {"setp.nan.f32", "\tsetp.nan.f32 %p1, %f1, %f2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F32},
    {"setp.num.and.f32",
     "\tsetp.lt.s32 %p2, %r3, 0;\n\tsetp.num.and.f32 %p1, %f1, %f2, %p2;\n\tselp.u32 %r5, 1, 0, %p1;\n" OUT_R32, IN_F32},
    {"selp.f32", "\tsetp.lt.s32 %p1, %r3, %r4;\n\tselp.f32 %f3, %f1, %f2, %p1;\n" OUT_F32, IN_F32},
    /* transcendentals: within their documented bounds of libm */
    {"ex2.approx.f32", "\tex2.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"lg2.approx.f32", "\tlg2.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"sin.approx.f32", "\tsin.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"cos.approx.f32", "\tcos.approx.f32 %f3, %f1;\n" OUT_F32, IN_F32},
    {"ex2.approx.ftz.f32", "\tex2.approx.ftz.f32 %f3, %f1;\n" OUT_F32, IN_F32},
};

#define PTK_COUNT (sizeof PTK_KERNELS / sizeof PTK_KERNELS[0])

/* Statements our parser refuses that ptxas refuses too (kept in step by ptx_ptxas_test.c). */
static const char *const PTK_INVALID[] = {
    "\tcvt.rn.f32.f32 %f3, %f1;\n",         /* a float rounding on a same-type cvt */
    "\tcvt.s32.f32 %r5, %f1;\n",            /* float -> int without an integer rounding */
    "\tcvt.rn.f32.f16 %f3, %rs1;\n",        /* a rounding on a widening cvt */
    "\tmov.f32 %f3, 1;\n",                  /* an integer constant for a float */
    "\tadd.s32 %r5, %r3, 0f3F800000;\n",    /* a float constant for an integer */
    "\tmul.s32 %r5, %r3, %r4;\n",           /* integer mul without .lo/.hi/.wide */
    "\tfrobnicate.b32 %r5, %r3;\n",         /* an unknown instruction */
    "\tadd.rn.s32 %r5, %r3, %r4;\n",        /* a float rounding on an integer add */
    "\tadd.f32 %f3, %f1, %f9;\n",           /* a register beyond its declaration */
    "\tbra NOWHERE;\n",                     /* an undefined label */
    "\tex2.f32 %f3, %f1;\n",                /* ex2.f32 needs .approx */
    "\tld.global.f32 %f3, [%rd3;\n",        /* a broken address */
    "\tadd.s32 %r5, %f1, %r4;\n",           /* a float register for an integer operand */
    "\tmov.f32 %f3, %rd5;\n",               /* a 64-bit register for a 32-bit float */
    "\tshl.b32 %r5, %r3, %rd5;\n",          /* a 64-bit shift amount */
    "\tmul.wide.s32 %r5, %r3, %r4;\n",      /* a 32-bit destination of a widening multiply */
    "\tld.global.f32 %f3, [%r3];\n",        /* a 32-bit address with .address_size 64 */
    "\tmov.u64 %rd6, %ctaid.x;\n",          /* special registers are .u32 */
};

#define PTK_INVALID_COUNT (sizeof PTK_INVALID / sizeof PTK_INVALID[0])

#endif
