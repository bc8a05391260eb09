# The devices of the PLDMA's qemu-system-x86_64 (scripts/build-qemu passes
# --with-devices-x86_64=pldma): q35 with intel-iommu, pcie-root-port,
# virtio-pci (net and blk, as on virt) and pldma-pci.  No other board and
# none of the PC's optional devices: the x86 target shares the tree and the
# common objects of qemu-system-aarch64, and builds only what its guests use.
CONFIG_Q35=y
CONFIG_VTD=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_BLK=y
CONFIG_PLDMA_PCI=y
# isa-debug-exit: a guest test ends QEMU with its status (guest-exit)
CONFIG_ISA_DEBUG=y

# (defaults to y with PCIE_PORT but needs PCI_BRIDGE, which PCI_DEVICES=n
# leaves out: it would not link)
CONFIG_PCIE_PCI_BRIDGE=n
CONFIG_ISAPC=n
CONFIG_I440FX=n
CONFIG_MICROVM=n
CONFIG_NITRO_ENCLAVE=n
CONFIG_PCI_DEVICES=n
CONFIG_AMD_IOMMU=n
CONFIG_APPLESMC=n
CONFIG_HYPERV=n
CONFIG_ISA_IPMI_KCS=n
CONFIG_ISA_IPMI_BT=n
CONFIG_PCI_IPMI_KCS=n
CONFIG_PCI_IPMI_BT=n
CONFIG_IPMI_SSIF=n
CONFIG_PARALLEL=n
CONFIG_PVPANIC_ISA=n
CONFIG_QXL=n
CONFIG_SEV=n
CONFIG_SGX=n
CONFIG_TDX=n
CONFIG_TEST_DEVICES=n
CONFIG_TPM_CRB=n
CONFIG_TPM_TIS_ISA=n
CONFIG_VGA_PCI=n
CONFIG_VIRTIO_VGA=n
CONFIG_NVDIMM=n
CONFIG_FDC_ISA=n
CONFIG_E1000E_PCI_EXPRESS=n
CONFIG_VMPORT=n
CONFIG_VMMOUSE=n
