/*
 * SMMU platform masters and the stall/resume path to DMA masters
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This is the interface between the SMMUv3 model and a DMA master that can
 * tolerate a stalled transaction (see docs/specs/smmuv3-stall.rst).
 *
 * Substreams.  A master tags each transaction with its SubstreamID in
 * MemTxAttrs, following the convention of hw/riscv/riscv-iommu.c:
 *   attrs.unspecified == true   ->  SSV = 0 (no substream)
 *   otherwise                   ->  SSV = 1, SSID = attrs.pid
 * MemTxAttrs.pid is 20 bits wide (patch "memattrs: Widen MemTxAttrs.pid"),
 * the architectural maximum of IDR1.SSIDSIZE, so SMMU_STALL_MAX_SSID_BITS
 * is 20.
 * The SMMU's IOMMU memory region maps attributes to an IOMMU index
 * (attrs_to_index), so every (SID, SSID) gets its own translation context
 * through one AddressSpace per StreamID.
 *
 * Stalls.  When a transaction from a master that implements
 * TYPE_SMMU_STALL_MASTER faults in a stalling context (STE.S1STALLD == 0,
 * CD.S == 1, or STALL_MODEL == force), the SMMU
 *   1. queues an event with Stall = 1 and a STAG unique for that StreamID,
 *   2. calls SMMUStallMasterClass::stalled() synchronously, from inside the
 *      translate() of the faulting access, and
 *   3. fails that access (the memory API returns an error to the master).
 * The master must treat that failed access as "parked", not as an error,
 * and must not re-issue it by itself.  Exactly one of the following then
 * happens, later, from the SMMU's command-queue processing (an MMIO write of
 * the guest) or from reset/migration:
 *   - SMMUStallMasterClass::resumed(..., SMMU_STALL_RETRY): re-issue the
 *     access; the translation has been fixed by the guest (or it faults again,
 *     which raises a new stall with a new STAG);
 *   - SMMUStallMasterClass::resumed(..., SMMU_STALL_ABORT): CMD_RESUME with
 *     Action = abort: complete the transaction with an error;
 *   - SMMUStallMasterClass::resumed(..., SMMU_STALL_TERMINATED): the stall was
 *     terminated by CMD_STALL_TERM, by invalidation of its STE or CD, by
 *     disabling the SMMU, or by reset: complete with an error.
 * Before stalling, the SMMU asks the master's optional can_stall(): a
 * master that cannot hold the transaction now (one in a mode without stall
 * support, or an access outside of any of its contexts) returns false and
 * the transaction is terminated as in a non-stalling context.
 *
 * The event of a stall is written to the event queue with the SMMU's mutex
 * released; when the queue is full the transaction stays stalled and its
 * event is written once software consumes events.  resumed() is called with
 * the mutex released, usually from the guest's command-queue write, but it
 * can also come while one of the master's own accesses is in progress (an
 * event write that aborts terminates a stall from within a translation).
 * A master must therefore not issue DMA from resumed() while one of its
 * own accesses or MMIO handlers is running; a master that finds its
 * re-entrancy guard engaged defers the work to a bottom half.
 */

#ifndef HW_ARM_SMMU_STALL_H
#define HW_ARM_SMMU_STALL_H

#include "qom/object.h"
#include "exec/hwaddr.h"

/* Width of MemTxAttrs.pid, hence of the SubstreamIDs a master can send */
#define SMMU_STALL_MAX_SSID_BITS 20

/*
 * StreamIDs at or above this value belong to platform (non-PCI) masters.
 * PCI requester IDs are 16 bits wide, so a platform master's StreamID can
 * never collide with one; the SMMU advertises IDR1.SIDSIZE >= 17.
 */
#define SMMU_PLATFORM_SID_BASE 0x10000

#define TYPE_SMMU_STALL_MASTER "smmu-stall-master"

typedef struct SMMUStallMasterClass SMMUStallMasterClass;
DECLARE_CLASS_CHECKERS(SMMUStallMasterClass, SMMU_STALL_MASTER,
                       TYPE_SMMU_STALL_MASTER)
#define SMMU_STALL_MASTER(obj) \
    INTERFACE_CHECK(SMMUStallMaster, (obj), TYPE_SMMU_STALL_MASTER)

typedef struct SMMUStallMaster SMMUStallMaster;

typedef enum SMMUStallResponse {
    SMMU_STALL_RETRY,       /* CMD_RESUME, Action = retry */
    SMMU_STALL_ABORT,       /* CMD_RESUME, Action = abort */
    SMMU_STALL_TERMINATED,  /* STALL_TERM, invalidation, disable or reset */
} SMMUStallResponse;

typedef struct SMMUStallInfo {
    uint32_t sid;
    bool ssv;
    uint32_t ssid;
    uint16_t stag;
    hwaddr addr;            /* input (virtual) address of the access */
    bool is_write;
} SMMUStallInfo;

struct SMMUStallMasterClass {
    InterfaceClass parent_class;

    bool (*can_stall)(SMMUStallMaster *master, uint32_t sid);
    void (*stalled)(SMMUStallMaster *master, const SMMUStallInfo *info);
    void (*resumed)(SMMUStallMaster *master, uint32_t sid, uint16_t stag,
                    SMMUStallResponse resp);
};

typedef struct SMMUState SMMUState;

/**
 * smmu_platform_master_as: the SMMU-translated address space of a platform
 * (sysbus) master
 * @s: the SMMU
 * @master: the device; if it implements TYPE_SMMU_STALL_MASTER, it is
 *          notified of its stalls and their resolution
 * @sid: its StreamID, >= SMMU_PLATFORM_SID_BASE and below 1 << IDR1.SIDSIZE
 * @errp: error on an invalid or already used StreamID
 *
 * Returns the address space the master must use for all its DMA, or NULL.
 */
AddressSpace *smmu_platform_master_as(SMMUState *s, DeviceState *master,
                                      uint32_t sid, Error **errp);

/**
 * smmu_platform_master_release: undo smmu_platform_master_as() when the
 * master goes away (unrealize); its address space must not be used after.
 */
void smmu_platform_master_release(SMMUState *s, uint32_t sid);

/**
 * smmu_stall_is_pending: whether the SMMU holds the stalled transaction
 * (@sid, @stag); a master checks its migrated state against it.
 */
bool smmu_stall_is_pending(SMMUState *s, uint32_t sid, uint16_t stag);

#endif /* HW_ARM_SMMU_STALL_H */
