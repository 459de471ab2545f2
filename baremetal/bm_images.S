/* The kernel images, linked into the bare-metal ELF (paths given by -DSAXPY_IMG/-DSUM_IMG at assembly time). */
#define STR2(x) #x
#define STR(x) STR2(x)
    .section .rodata
    .balign 16
    .global bm_saxpy_img, bm_saxpy_img_end, bm_sum_img, bm_sum_img_end
bm_saxpy_img:
    .incbin STR(SAXPY_IMG)
bm_saxpy_img_end:
    .balign 16
bm_sum_img:
    .incbin STR(SUM_IMG)
bm_sum_img_end:
