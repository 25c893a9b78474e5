/* The measured rcp.approx.ftz.f32 table (docs/numerics.md §2.1), embedded byte for byte. */
    .section .rodata
    .balign 64
    .globl nvfp4_rcp_table_begin
    .globl nvfp4_rcp_table_end
nvfp4_rcp_table_begin:
    .incbin "rcp_approx_ftz_f32_sm90.bin"  /* found through -Wa,-I<src/quant> */
nvfp4_rcp_table_end:
    .section .note.GNU-stack,"",%progbits  /* % rather than @: @ starts a comment on Arm */
