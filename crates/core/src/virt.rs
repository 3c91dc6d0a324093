//! Whether this machine is a virtual one, and how: results measured
//! inside a virtual machine say so. Read from what the kernel shows: the
//! CPU's hypervisor flag (/proc/cpuinfo), the firmware's vendor and
//! product (/sys/class/dmi/id), Xen's /sys/hypervisor/type, and the
//! clock sources (KVM's paravirtual clock appears only under hardware
//! virtualization). A QEMU machine without KVM's clock is emulated (TCG):
//! its figures measure the emulator, not any device.

use std::path::Path;

pub use iolab_stats::Virt;

/// This machine's virtualization, if it is a virtual machine.
pub fn detect() -> Option<Virt> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    detect_from(&Facts {
        cpuinfo: &read("/proc/cpuinfo"),
        sys_vendor: &read("/sys/class/dmi/id/sys_vendor"),
        product: &read("/sys/class/dmi/id/product_name"),
        xen: &read("/sys/hypervisor/type"),
        clocksources: &read("/sys/devices/system/clocksource/clocksource0/available_clocksource"),
        has_dmi: Path::new("/sys/class/dmi/id").exists(),
    })
}

/// What [`detect`] reads, for tests.
pub struct Facts<'a> {
    pub cpuinfo: &'a str,
    pub sys_vendor: &'a str,
    pub product: &'a str,
    pub xen: &'a str,
    pub clocksources: &'a str,
    pub has_dmi: bool,
}

/// [`detect`] on given facts.
pub fn detect_from(f: &Facts) -> Option<Virt> {
    let flag = f
        .cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|w| w == "hypervisor"));
    let vendor = f.sys_vendor.trim();
    let product = f.product.trim();
    let kvm_clock = f.clocksources.split_whitespace().any(|c| c == "kvm-clock");
    let named = |name: &str, emulated: bool| {
        Some(Virt {
            name: name.into(),
            emulated,
        })
    };
    if f.xen.trim() == "xen" || vendor == "Xen" {
        return named("Xen", false);
    }
    match vendor {
        "QEMU" | "Bochs" => {
            return if kvm_clock {
                named("KVM", false)
            } else {
                named("QEMU", true)
            }
        }
        "VMware, Inc." => return named("VMware", false),
        "Microsoft Corporation" if product.contains("Virtual") => return named("Hyper-V", false),
        "innotek GmbH" | "Oracle Corporation" if product.contains("VirtualBox") => {
            return named("VirtualBox", false)
        }
        _ => {}
    }
    if kvm_clock {
        // KVM without QEMU's firmware (Firecracker, cloud hypervisors).
        return named(if vendor.is_empty() { "KVM" } else { vendor }, false);
    }
    if flag {
        let who = if vendor.is_empty() || !f.has_dmi {
            "unknown hypervisor"
        } else {
            vendor
        };
        return named(who, false);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(cpu: &'a str, vendor: &'a str, clocks: &'a str) -> Facts<'a> {
        Facts {
            cpuinfo: cpu,
            sys_vendor: vendor,
            product: "Standard PC (i440FX + PIIX, 1996)",
            xen: "",
            clocksources: clocks,
            has_dmi: !vendor.is_empty(),
        }
    }

    #[test]
    fn tells_emulation_from_hardware_virtualization() {
        let hv = "flags\t\t: fpu vme sse2 hypervisor\n";
        let tcg = detect_from(&facts(hv, "QEMU\n", "tsc hpet acpi_pm\n")).unwrap();
        assert_eq!(tcg.describe(), "QEMU, emulated");
        assert!(tcg.emulated);
        let kvm = detect_from(&facts(hv, "QEMU\n", "kvm-clock tsc hpet\n")).unwrap();
        assert_eq!((kvm.name.as_str(), kvm.emulated), ("KVM", false));
        // Firecracker: no firmware tables, KVM's clock.
        let fc = detect_from(&facts(hv, "", "tsc kvm-clock\n")).unwrap();
        assert_eq!(fc.name, "KVM");
        // Bare metal.
        assert_eq!(
            detect_from(&facts("flags\t: fpu sse2\n", "Dell Inc.\n", "tsc hpet\n")),
            None
        );
        let vmw = detect_from(&facts(hv, "VMware, Inc.\n", "tsc\n")).unwrap();
        assert_eq!(vmw.name, "VMware");
    }
}
