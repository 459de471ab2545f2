/* Bare-metal entry on qemu virt (EL1, MMU off): enable FP/SIMD (kernels use float registers), set the stack,
 * zero .bss and the TLS block, point tpidr_el0 at the TLS block, call bm_main, exit through semihosting with its
 * return value (SYS_EXIT with ADP_Stopped_ApplicationExit; qemu exits with that status). */
    .section .text.boot, "ax"
    .global _start
_start:
    mov     x0, #(3 << 20)          /* CPACR_EL1.FPEN = 0b11: no FP/SIMD traps */
    msr     cpacr_el1, x0
    isb
    ldr     x0, =__stack_top
    mov     sp, x0
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:  ldr     x0, =__tls_block
    add     x1, x0, #0x1000
3:  str     xzr, [x0], #8
    cmp     x0, x1
    b.lo    3b
    ldr     x0, =__tls_block
    msr     tpidr_el0, x0
    bl      bm_main
    /* semihosting SYS_EXIT (0x18): x1 -> {ADP_Stopped_ApplicationExit = 0x20026, status} */
    adr     x1, exit_block
    mov     w2, w0
    str     x2, [x1, #8]
    mov     x0, #0x18
    hlt     #0xf000
4:  wfi
    b       4b

    .data
    .balign 8
exit_block:
    .quad   0x20026
    .quad   0
