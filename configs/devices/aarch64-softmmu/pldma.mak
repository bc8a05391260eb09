# The devices of the PLDMA's qemu-system-aarch64 and qemu-fuzz-aarch64
# (scripts/build-qemu passes --with-devices-aarch64=pldma to every build):
# the virt board with the SMMUv3, the PLDMA on the platform bus and on
# PCIe, pcie-root-port (hot-plug) and virtio-pci (net and blk), as the
# guests, qtests and fuzz configs use them.  No other board and none of
# the optional PCI devices (PCI_DEVICES: USB, sound, display, NICs):
# they were a third of every cold QEMU build (normal, -O0 debug, and the
# clang/ASan fuzz build), which CI runs three times.
CONFIG_ARM_VIRT=y
CONFIG_PLDMA=y
CONFIG_PLDMA_PCI=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_BLK=y
CONFIG_PCI_DEVICES=n
# (defaults to y with PCIE_PORT but needs PCI_BRIDGE, which PCI_DEVICES=n
# leaves out: it would not link)
CONFIG_PCIE_PCI_BRIDGE=n
CONFIG_CUBIEBOARD=n
CONFIG_DIGIC=n
CONFIG_EXYNOS4=n
CONFIG_HIGHBANK=n
CONFIG_INTEGRATOR=n
CONFIG_MAX78000FTHR=n
CONFIG_MPS3R=n
CONFIG_MUSCA=n
CONFIG_MUSICPAL=n
CONFIG_NETDUINO2=n
CONFIG_NETDUINOPLUS2=n
CONFIG_OLIMEX_STM32_H405=n
CONFIG_REALVIEW=n
CONFIG_SBSA_REF=n
CONFIG_SABRELITE=n
CONFIG_STELLARIS=n
CONFIG_STM32VLDISCOVERY=n
CONFIG_COLLIE=n
CONFIG_SX1=n
CONFIG_VERSATILE=n
CONFIG_VEXPRESS=n
CONFIG_ZYNQ=n
CONFIG_ALLWINNER_H3=n
CONFIG_ALLWINNER_R40=n
CONFIG_RASPI=n
CONFIG_B_L475E_IOT01A=n
CONFIG_XLNX_ZYNQMP_ARM=n
CONFIG_XLNX_VERSAL=n
CONFIG_NPCM7XX=n
CONFIG_NPCM8XX=n
CONFIG_FSL_IMX25=n
CONFIG_FSL_IMX31=n
CONFIG_ASPEED_SOC=n
CONFIG_MPS2=n
CONFIG_FSL_IMX7=n
CONFIG_FSL_IMX8MP_EVK=n
CONFIG_FSL_IMX6UL=n
CONFIG_MICROBIT=n
CONFIG_EMCRAFT_SF2=n
CONFIG_VMAPPLE=n
