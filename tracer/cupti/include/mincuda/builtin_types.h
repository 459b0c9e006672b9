/* Empty stand-in for the CUDA runtime's builtin_types.h, which
 * cupti_callbacks.h includes but whose types rlktop does not use. See cuda.h. */
