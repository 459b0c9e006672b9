/*
 * Minimal stand-in for the CUDA driver API header, written for rlktop.
 *
 * The CUPTI headers (cupti_activity.h, cupti_callbacks.h) include <cuda.h>
 * for a handful of types. Debian ships cuda.h only in nvidia-cuda-dev
 * (0.8 GB, pulls a driver package), so tracer/cupti compiles against these
 * declarations instead when no CUDA toolkit is given (build tag cudahome
 * selects a real toolkit's headers). Only types are declared: the library
 * never calls the CUDA driver. Layouts match the CUDA 11.8 cuda.h (opaque
 * handles are pointers, CUdevice is int, CUdeviceptr is 64-bit).
 */
#ifndef RLKTOP_MINCUDA_H
#define RLKTOP_MINCUDA_H
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__

#include <stddef.h>
#include <stdint.h>

#define CUDA_VERSION 11080
#define CUDAAPI

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUuuid_st { char bytes[16]; } CUuuid;

typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum CUgraphNodeType_enum { CU_GRAPH_NODE_TYPE_KERNEL = 0 } CUgraphNodeType;
typedef enum CUdevice_attribute_enum { CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1 } CUdevice_attribute;

/* Only pointed to by CUpti_ActivityKernel8.pAccessPolicyWindow. */
typedef struct CUaccessPolicyWindow_st CUaccessPolicyWindow;

#endif /* __cuda_cuda_h__ */
#endif /* RLKTOP_MINCUDA_H */
