/* The slice of NCCL's ABI the nccl family (shim/nccl) uses: the handle
 * and id types, the result, reduction and data-type enums, the config
 * struct up to the fields it reads, and one function type per symbol it
 * intercepts or calls. Our own declarations with NVIDIA's names (nccl.h
 * of NCCL 2.28), so libdetshim builds without NCCL; the values are checked
 * against the real header, where installed, by tests/unit/test_nccl_abi.c.
 * Also used by the fake libnccl (tests/fakes/nccl) and its test programs.
 */
#ifndef DETSHIM_NCCL_API_H
#define DETSHIM_NCCL_API_H

#include <stddef.h>

#include "cuda/cuda_api.h"

/* Every enum value used, as X(name, value), one list per enum: the enums
 * themselves in a normal build, static assertions against nccl.h in the
 * ABI test. */
#define DETSHIM_NCCL_RESULTS(X)                                                            \
    X(ncclSuccess, 0) X(ncclUnhandledCudaError, 1) X(ncclSystemError, 2)                   \
    X(ncclInternalError, 3) X(ncclInvalidArgument, 4) X(ncclInvalidUsage, 5)               \
    X(ncclRemoteError, 6) X(ncclInProgress, 7)
/* Values >= ncclNumOps are operators made by ncclRedOpCreatePreMulSum. */
#define DETSHIM_NCCL_OPS(X)                                                                \
    X(ncclSum, 0) X(ncclProd, 1) X(ncclMax, 2) X(ncclMin, 3) X(ncclAvg, 4) X(ncclNumOps, 5)
#define DETSHIM_NCCL_TYPES(X)                                                              \
    X(ncclInt8, 0) X(ncclUint8, 1) X(ncclInt32, 2) X(ncclUint32, 3) X(ncclInt64, 4)        \
    X(ncclUint64, 5) X(ncclFloat16, 6) X(ncclFloat32, 7) X(ncclFloat64, 8)                 \
    X(ncclBfloat16, 9) X(ncclFloat8e4m3, 10) X(ncclFloat8e5m2, 11) X(ncclNumTypes, 12)

#ifndef DETSHIM_NCCL_REAL_TYPES
#define DETSHIM_NCCL_ENUM_ITEM(name, value) name = value,
typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum { DETSHIM_NCCL_RESULTS(DETSHIM_NCCL_ENUM_ITEM) } ncclResult_t;
typedef enum { DETSHIM_NCCL_OPS(DETSHIM_NCCL_ENUM_ITEM) ncclMaxRedOp = 0x7fffffff } ncclRedOp_t;
typedef enum { DETSHIM_NCCL_TYPES(DETSHIM_NCCL_ENUM_ITEM) } ncclDataType_t;

#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_CONFIG_UNDEF_INT (-2147483647 - 1)

/* ncclConfig_t as NCCL 2.28 lays it out. Older releases end earlier:
 * read a field only when `size` covers it (NCCL_CONFIG_HAS). */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
    int splitShare;
    int trafficClass;
    const char *commName;
    int collnetEnable;
    int CTAPolicy;
    int shrinkShare;
    int nvlsCTAs;
    int nChannelsPerNetPeer;
    int nvlinkCentricSched;
} ncclConfig_t;
#endif

#define NCCL_CONFIG_HAS(cfg, field)                                                        \
    ((cfg)->size >= offsetof(ncclConfig_t, field) + sizeof((cfg)->field))

typedef ncclResult_t ncclGetUniqueId_fn(ncclUniqueId *uniqueId);
typedef ncclResult_t ncclCommInitRank_fn(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                         int rank);
typedef ncclResult_t ncclCommInitRankConfig_fn(ncclComm_t *comm, int nranks,
                                               ncclUniqueId commId, int rank,
                                               ncclConfig_t *config);
typedef ncclResult_t ncclCommInitAll_fn(ncclComm_t *comm, int ndev, const int *devlist);
typedef ncclResult_t ncclCommSplit_fn(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                      ncclConfig_t *config);
/* NCCL 2.23 and 2.27 (the toolkit's nccl.h declares both). */
typedef ncclResult_t ncclCommInitRankScalable_fn(ncclComm_t *newcomm, int nranks, int myrank,
                                                 int nId, ncclUniqueId *commIds,
                                                 ncclConfig_t *config);
typedef ncclResult_t ncclCommShrink_fn(ncclComm_t comm, int *excludeRanksList,
                                       int excludeRanksCount, ncclComm_t *newcomm,
                                       ncclConfig_t *config, int shrinkFlags);
typedef ncclResult_t ncclCommCount_fn(const ncclComm_t comm, int *count);
typedef ncclResult_t ncclCommUserRank_fn(const ncclComm_t comm, int *rank);
typedef ncclResult_t ncclCommDestroy_fn(ncclComm_t comm);
typedef ncclResult_t ncclMemAlloc_fn(void **ptr, size_t size);
typedef ncclResult_t ncclMemFree_fn(void *ptr);
typedef ncclResult_t ncclAllReduce_fn(const void *sendbuff, void *recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream);
typedef ncclResult_t ncclReduce_fn(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, ncclRedOp_t op, int root,
                                   ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclBcast_fn(void *buff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclBroadcast_fn(const void *sendbuff, void *recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream);
typedef ncclResult_t ncclReduceScatter_fn(const void *sendbuff, void *recvbuff, size_t recvcount,
                                          ncclDataType_t datatype, ncclRedOp_t op,
                                          ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclAllGather_fn(const void *sendbuff, void *recvbuff, size_t sendcount,
                                      ncclDataType_t datatype, ncclComm_t comm,
                                      cudaStream_t stream);
typedef ncclResult_t ncclAlltoAll_fn(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclComm_t comm,
                                     cudaStream_t stream);
typedef ncclResult_t ncclGather_fn(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                   cudaStream_t stream);
typedef ncclResult_t ncclScatter_fn(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream);
/* NCCL 2.29's one-sided put into a peer's registered window (not in the
 * 2.28 header of the toolkit here: the signature is upstream's
 * src/nccl.h.in of 2.29.2, as torch 2.15 imports it). */
typedef struct ncclWindow_vidmem *ncclWindow_t;
typedef ncclResult_t ncclPutSignal_fn(const void *localbuff, size_t count,
                                      ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                                      size_t peerWinOffset, int sigIdx, int ctx,
                                      unsigned int flags, ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclSend_fn(const void *sendbuff, size_t count, ncclDataType_t datatype,
                                 int peer, ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclRecv_fn(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                 ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t ncclGroupStart_fn(void);
typedef ncclResult_t ncclGroupEnd_fn(void);
typedef CUresult cuMemcpyHtoD_v2_fn(CUdeviceptr dst, const void *src, size_t bytes);

#endif
