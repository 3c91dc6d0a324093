//! `Environment`: where and on what a result was measured, as plain data.
//! The core's probe fills it (host, kernel, CPU, memory, virtual machine,
//! the mount and the block device under the target), the CLI stamps the
//! time, and the same value travels in a result's JSON and in the store's
//! record (where it is called provenance). Empty strings and `None` are
//! facts the probe could not find (no block device under tmpfs, say), or
//! that a result stored before iolab recorded them does not have.

use serde::{Deserialize, Serialize};

/// The facts about the host and the storage under a target.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// When the result was measured, UTC, RFC 3339 (empty until stamped).
    pub time: String,
    pub host: String,
    /// The kernel release, as `uname -r` prints it.
    pub kernel: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    pub memory_bytes: u64,
    pub iolab_version: String,
    /// The virtual machine the result was measured in; `None` on bare
    /// metal (and in results stored before iolab looked).
    pub hypervisor: Option<Virt>,
    /// The target, absolute and with symbolic links resolved as far as it
    /// exists.
    pub target: String,
    /// The filesystem type of the mount holding the target ("ext4").
    pub fs_type: String,
    pub mount_point: String,
    /// The mount's options and the filesystem's own, as `findmnt` lists
    /// them.
    pub mount_options: String,
    /// The mount's source ("/dev/vda1", "/dev/mapper/root", "tmpfs").
    pub mount_source: String,
    /// The whole block device under the target, partitions,
    /// device-mapper and loop devices resolved ("nvme0n1"); empty when
    /// there is none.
    pub block_device: String,
    pub device_model: String,
    pub rotational: Option<bool>,
    /// The active I/O scheduler ("mq-deadline", "none").
    pub scheduler: String,
    pub device_size_bytes: Option<u64>,
}

impl Environment {
    /// The host's facts only (time, host, kernel, CPU, memory, version,
    /// virtual machine), without a target, mount or device: for a result
    /// measured in several places.
    pub fn host_only(&self) -> Environment {
        Environment {
            time: self.time.clone(),
            host: self.host.clone(),
            kernel: self.kernel.clone(),
            cpu_model: self.cpu_model.clone(),
            cpu_count: self.cpu_count,
            memory_bytes: self.memory_bytes,
            iolab_version: self.iolab_version.clone(),
            hypervisor: self.hypervisor.clone(),
            ..Environment::default()
        }
    }

    /// The caveat a result measured here needs: figures under emulation
    /// are not device figures.
    pub fn emulation_note(&self) -> Option<String> {
        self.hypervisor.as_ref().and_then(Virt::note)
    }
}

/// What a virtual machine is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Virt {
    /// "KVM", "QEMU" (emulated), "VMware", "Hyper-V", "Xen", "VirtualBox"
    /// or the firmware vendor as it reads.
    pub name: String,
    /// Instructions are emulated in software, not run by the CPU.
    pub emulated: bool,
}

impl Virt {
    /// For people: "KVM", "QEMU, emulated".
    pub fn describe(&self) -> String {
        if self.emulated {
            format!("{}, emulated", self.name)
        } else {
            self.name.clone()
        }
    }

    /// The note an emulated machine's results carry; none otherwise.
    pub fn note(&self) -> Option<String> {
        self.emulated.then(|| {
            format!(
                "measured inside an emulated machine ({}): performance figures under emulation \
                 are not device figures (every time and speed here is the emulator's)",
                self.name
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_provenance_loads_and_new_fields_serialize() {
        // A record's provenance as iolab stored it before the hypervisor
        // and the mount point were kept.
        let old = r#"{"time":"2026-01-01T00:00:00Z","host":"h","kernel":"6.1",
            "cpu_model":"c","cpu_count":2,"memory_bytes":1024,"iolab_version":"0.1.0",
            "target":"/t","fs_type":"ext4","mount_options":"rw","mount_source":"/dev/vda",
            "block_device":"vda","device_model":"","rotational":false,"scheduler":"none",
            "device_size_bytes":4096}"#;
        let e: Environment = serde_json::from_str(old).unwrap();
        assert_eq!((e.host.as_str(), e.fs_type.as_str()), ("h", "ext4"));
        assert_eq!(e.hypervisor, None);
        assert_eq!(e.mount_point, "");
        let vm = Environment {
            hypervisor: Some(Virt {
                name: "QEMU".into(),
                emulated: true,
            }),
            target: "/t".into(),
            ..e
        };
        let v: serde_json::Value = serde_json::to_value(&vm).unwrap();
        assert_eq!(v["hypervisor"]["name"], "QEMU");
        assert_eq!(v["hypervisor"]["emulated"], true);
        assert!(vm
            .emulation_note()
            .unwrap()
            .contains("performance figures under emulation are not device figures"));
        let host = vm.host_only();
        assert_eq!((host.host.as_str(), host.target.as_str()), ("h", ""));
        assert_eq!(host.hypervisor, vm.hypervisor);
        let kvm = Virt {
            name: "KVM".into(),
            emulated: false,
        };
        assert_eq!(kvm.note(), None);
        assert_eq!(kvm.describe(), "KVM");
    }
}
