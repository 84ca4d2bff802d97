//! Instance types and preferences the templates look up in the cluster:
//! `apps/vm-instance/templates/vm.yaml` (2, 5), `apps/kubernetes/templates/cluster.yaml`
//! (532) and `apps/kubernetes-nodes/templates/nodegroup.yaml` (189) fail to
//! render when the `lookup` finds no object of that name. Which names exist
//! is cluster state; the platform installs those of
//! `system/kubevirt-instancetypes` (the same in v1.5.4 and v1.6.2) on every
//! variant, so a valid name outside them is warned about, not denied: an
//! operator may have created it. A name no object can have is denied. The
//! sizes of the installed instance types are known without a cluster, and
//! the kubelet reservations are judged against them (kubelet.rs). A test
//! compares the tables with that chart.

use shared::validators::is_dns1123_subdomain;
use shared::{Field, FieldError};

use shared::Findings;

/// A `VirtualMachineClusterInstancetype` the platform installs, with the
/// size the node-group templates read from it (`spec.cpu.guest`,
/// `spec.memory.guest`, as `toString` writes them).
pub struct InstanceType {
    pub name: &'static str,
    pub cpu: &'static str,
    pub memory: &'static str,
}

/// The `VirtualMachineClusterInstancetype`s the platform installs.
const INSTANCE_TYPES: &[InstanceType] = &[
    InstanceType {
        name: "cx1.2xlarge",
        cpu: "8",
        memory: "16Gi",
    },
    InstanceType {
        name: "cx1.2xlarge1gi",
        cpu: "8",
        memory: "16Gi",
    },
    InstanceType {
        name: "cx1.4xlarge",
        cpu: "16",
        memory: "32Gi",
    },
    InstanceType {
        name: "cx1.4xlarge1gi",
        cpu: "16",
        memory: "32Gi",
    },
    InstanceType {
        name: "cx1.8xlarge",
        cpu: "32",
        memory: "64Gi",
    },
    InstanceType {
        name: "cx1.8xlarge1gi",
        cpu: "32",
        memory: "64Gi",
    },
    InstanceType {
        name: "cx1.large",
        cpu: "2",
        memory: "4Gi",
    },
    InstanceType {
        name: "cx1.large1gi",
        cpu: "2",
        memory: "4Gi",
    },
    InstanceType {
        name: "cx1.medium",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "cx1.medium1gi",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "cx1.xlarge",
        cpu: "4",
        memory: "8Gi",
    },
    InstanceType {
        name: "cx1.xlarge1gi",
        cpu: "4",
        memory: "8Gi",
    },
    InstanceType {
        name: "d1.2xlarge",
        cpu: "8",
        memory: "32Gi",
    },
    InstanceType {
        name: "d1.2xmedium",
        cpu: "2",
        memory: "4Gi",
    },
    InstanceType {
        name: "d1.4xlarge",
        cpu: "16",
        memory: "64Gi",
    },
    InstanceType {
        name: "d1.8xlarge",
        cpu: "32",
        memory: "128Gi",
    },
    InstanceType {
        name: "d1.large",
        cpu: "2",
        memory: "8Gi",
    },
    InstanceType {
        name: "d1.medium",
        cpu: "1",
        memory: "4Gi",
    },
    InstanceType {
        name: "d1.micro",
        cpu: "1",
        memory: "1Gi",
    },
    InstanceType {
        name: "d1.nano",
        cpu: "1",
        memory: "512Mi",
    },
    InstanceType {
        name: "d1.small",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "d1.xlarge",
        cpu: "4",
        memory: "16Gi",
    },
    InstanceType {
        name: "gn1.2xlarge",
        cpu: "8",
        memory: "32Gi",
    },
    InstanceType {
        name: "gn1.4xlarge",
        cpu: "16",
        memory: "64Gi",
    },
    InstanceType {
        name: "gn1.8xlarge",
        cpu: "32",
        memory: "128Gi",
    },
    InstanceType {
        name: "gn1.xlarge",
        cpu: "4",
        memory: "16Gi",
    },
    InstanceType {
        name: "m1.2xlarge",
        cpu: "8",
        memory: "64Gi",
    },
    InstanceType {
        name: "m1.2xlarge1gi",
        cpu: "8",
        memory: "64Gi",
    },
    InstanceType {
        name: "m1.4xlarge",
        cpu: "16",
        memory: "128Gi",
    },
    InstanceType {
        name: "m1.4xlarge1gi",
        cpu: "16",
        memory: "128Gi",
    },
    InstanceType {
        name: "m1.8xlarge",
        cpu: "32",
        memory: "256Gi",
    },
    InstanceType {
        name: "m1.8xlarge1gi",
        cpu: "32",
        memory: "256Gi",
    },
    InstanceType {
        name: "m1.large",
        cpu: "2",
        memory: "16Gi",
    },
    InstanceType {
        name: "m1.large1gi",
        cpu: "2",
        memory: "16Gi",
    },
    InstanceType {
        name: "m1.xlarge",
        cpu: "4",
        memory: "32Gi",
    },
    InstanceType {
        name: "m1.xlarge1gi",
        cpu: "4",
        memory: "32Gi",
    },
    InstanceType {
        name: "n1.2xlarge",
        cpu: "16",
        memory: "32Gi",
    },
    InstanceType {
        name: "n1.4xlarge",
        cpu: "32",
        memory: "64Gi",
    },
    InstanceType {
        name: "n1.8xlarge",
        cpu: "64",
        memory: "128Gi",
    },
    InstanceType {
        name: "n1.large",
        cpu: "4",
        memory: "8Gi",
    },
    InstanceType {
        name: "n1.medium",
        cpu: "4",
        memory: "4Gi",
    },
    InstanceType {
        name: "n1.xlarge",
        cpu: "8",
        memory: "16Gi",
    },
    InstanceType {
        name: "o1.2xlarge",
        cpu: "8",
        memory: "32Gi",
    },
    InstanceType {
        name: "o1.4xlarge",
        cpu: "16",
        memory: "64Gi",
    },
    InstanceType {
        name: "o1.8xlarge",
        cpu: "32",
        memory: "128Gi",
    },
    InstanceType {
        name: "o1.large",
        cpu: "2",
        memory: "8Gi",
    },
    InstanceType {
        name: "o1.medium",
        cpu: "1",
        memory: "4Gi",
    },
    InstanceType {
        name: "o1.micro",
        cpu: "1",
        memory: "1Gi",
    },
    InstanceType {
        name: "o1.nano",
        cpu: "1",
        memory: "512Mi",
    },
    InstanceType {
        name: "o1.small",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "o1.xlarge",
        cpu: "4",
        memory: "16Gi",
    },
    InstanceType {
        name: "rt1.2xlarge",
        cpu: "8",
        memory: "32Gi",
    },
    InstanceType {
        name: "rt1.4xlarge",
        cpu: "16",
        memory: "64Gi",
    },
    InstanceType {
        name: "rt1.8xlarge",
        cpu: "32",
        memory: "128Gi",
    },
    InstanceType {
        name: "rt1.large",
        cpu: "2",
        memory: "8Gi",
    },
    InstanceType {
        name: "rt1.medium",
        cpu: "1",
        memory: "4Gi",
    },
    InstanceType {
        name: "rt1.micro",
        cpu: "1",
        memory: "1Gi",
    },
    InstanceType {
        name: "rt1.small",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "rt1.xlarge",
        cpu: "4",
        memory: "16Gi",
    },
    InstanceType {
        name: "u1.2xlarge",
        cpu: "8",
        memory: "32Gi",
    },
    InstanceType {
        name: "u1.2xmedium",
        cpu: "2",
        memory: "4Gi",
    },
    InstanceType {
        name: "u1.4xlarge",
        cpu: "16",
        memory: "64Gi",
    },
    InstanceType {
        name: "u1.8xlarge",
        cpu: "32",
        memory: "128Gi",
    },
    InstanceType {
        name: "u1.large",
        cpu: "2",
        memory: "8Gi",
    },
    InstanceType {
        name: "u1.medium",
        cpu: "1",
        memory: "4Gi",
    },
    InstanceType {
        name: "u1.micro",
        cpu: "1",
        memory: "1Gi",
    },
    InstanceType {
        name: "u1.nano",
        cpu: "1",
        memory: "512Mi",
    },
    InstanceType {
        name: "u1.small",
        cpu: "1",
        memory: "2Gi",
    },
    InstanceType {
        name: "u1.xlarge",
        cpu: "4",
        memory: "16Gi",
    },
];

/// The instance type the platform installs under `name`.
pub fn shipped(name: &str) -> Option<&'static InstanceType> {
    INSTANCE_TYPES.iter().find(|t| t.name == name)
}

/// The `VirtualMachineClusterPreference`s the platform installs.
const PREFERENCES: &[&str] = &[
    "alpine",
    "centos.7",
    "centos.7.desktop",
    "centos.stream10",
    "centos.stream10.desktop",
    "centos.stream8",
    "centos.stream8.desktop",
    "centos.stream8.dpdk",
    "centos.stream9",
    "centos.stream9.desktop",
    "centos.stream9.dpdk",
    "cirros",
    "debian",
    "fedora",
    "fedora.arm64",
    "fedora.s390x",
    "legacy",
    "linux",
    "linux.efi",
    "linux.virtiotransitional",
    "opensuse.leap",
    "opensuse.tumbleweed",
    "oraclelinux",
    "rhel.10",
    "rhel.10.arm64",
    "rhel.10.s390x",
    "rhel.7",
    "rhel.7.desktop",
    "rhel.8",
    "rhel.8.desktop",
    "rhel.8.dpdk",
    "rhel.9",
    "rhel.9.arm64",
    "rhel.9.desktop",
    "rhel.9.dpdk",
    "rhel.9.realtime",
    "rhel.9.s390x",
    "sles",
    "ubuntu",
    "windows.10",
    "windows.10.virtio",
    "windows.11",
    "windows.11.virtio",
    "windows.2k12",
    "windows.2k12.virtio",
    "windows.2k16",
    "windows.2k16.virtio",
    "windows.2k19",
    "windows.2k19.virtio",
    "windows.2k22",
    "windows.2k22.virtio",
    "windows.2k25",
    "windows.2k25.virtio",
    "windows.2k3",
    "windows.2k8",
    "windows.2k8.virtio",
    "windows.7",
    "windows.7.virtio",
    "windows.xp",
];

/// A VMInstance's `instanceType` and `instanceProfile` (`vm.yaml` 2, 5:
/// looked up whenever non-empty).
pub fn vm_instance(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [instance_type, profile] = spec.members(["instanceType", "instanceProfile"])?;
    if let Some(name) = instance_type.string()?.filter(|n| !n.is_empty()) {
        looked_up(
            &instance_type,
            name,
            INSTANCE_TYPE,
            shipped(name).is_some(),
            out,
        );
    }
    if let Some(name) = profile.string()?.filter(|n| !n.is_empty()) {
        looked_up(&profile, name, PREFERENCE, PREFERENCES.contains(&name), out);
    }
    Ok(())
}

/// A node group's `instanceType`, looked up unless `resources` sets both
/// `cpu` and `memory` and `sized_skips_lookup` (`cluster.yaml` 530,
/// `nodegroup.yaml` 187; before v1.5.2, `cluster.yaml` 243 looks it up
/// whenever it is set); `default_instance_type` stands in when the key is
/// absent.
pub fn node_group(
    group: &Field<'_>,
    default_instance_type: &str,
    sized_skips_lookup: bool,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let instance_type = group.field("instanceType")?;
    let name = match instance_type.json() {
        None => default_instance_type,
        Some(_) => instance_type.string()?.unwrap_or_default(),
    };
    let [cpu, memory] = group.field("resources")?.members(["cpu", "memory"])?;
    // From v1.5.2 the chart skips the lookup of a group sized by both.
    let skipped = sized_skips_lookup
        && crate::values::truthy(cpu.json())
        && crate::values::truthy(memory.json());
    if !name.is_empty() && !skipped {
        looked_up(
            &instance_type,
            name,
            INSTANCE_TYPE,
            shipped(name).is_some(),
            out,
        );
    }
    Ok(())
}

/// What a chart looks up: how messages name it, its kind, and a name the
/// platform installs.
struct Looked {
    what: &'static str,
    kind: &'static str,
    example: &'static str,
}

const INSTANCE_TYPE: Looked = Looked {
    what: "an instance type",
    kind: "VirtualMachineClusterInstancetype",
    example: "u1.medium",
};

const PREFERENCE: Looked = Looked {
    what: "a preference",
    kind: "VirtualMachineClusterPreference",
    example: "ubuntu",
};

/// `name`, which the chart looks up as a cluster-scoped `looked.kind`: a
/// name no object can have (kube-apiserver names every custom resource a
/// lowercase RFC 1123 subdomain of at most 253 characters) is never found,
/// whatever the cluster holds; one the platform does not install may be
/// found, which only the cluster can tell.
fn looked_up(field: &Field<'_>, name: &str, looked: Looked, is_shipped: bool, out: &mut Findings) {
    let Looked {
        what,
        kind,
        example,
    } = looked;
    if !is_dns1123_subdomain(name) {
        out.add(
            crate::rules::INSTANCE_TYPE_NAME,
            field.path(),
            format!(
                "{name:?} cannot be the name of a {kind} (a lowercase RFC 1123 subdomain of at most 253 \
                 characters), so the chart's lookup never finds it and the chart fails to render. Use {what} \
                 Cozystack installs, such as {example}."
            ),
        );
    } else if !is_shipped {
        out.add(
            crate::rules::INSTANCE_TYPE_NOT_SHIPPED,
            field.path(),
            format!(
                "{name:?} is not {what} Cozystack installs (system/kubevirt-instancetypes): the chart looks it up \
                 and fails to render unless the cluster has a {kind} of that name. Use one it installs, such as \
                 {example}, or create the {kind} first."
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHART: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cozystack-v1.6.2/charts/system/kubevirt-instancetypes/templates"
    );

    /// Every object of the chart's templates: its kind, `metadata.name`,
    /// and the `guest` of its `spec.cpu` and `spec.memory`.
    fn chart_objects() -> Vec<(String, String, String, String)> {
        let mut objects: Vec<(String, String, String, String)> = Vec::new();
        let mut files: Vec<_> = std::fs::read_dir(CHART)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let mut section = "";
            for line in std::fs::read_to_string(file).unwrap().lines() {
                if let Some(kind) = line.strip_prefix("kind: ") {
                    objects.push((
                        kind.trim().to_owned(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ));
                } else if let Some(object) = objects.last_mut() {
                    if let Some(name) = line.strip_prefix("  name: ")
                        && object.1.is_empty()
                    {
                        object.1 = name.trim().to_owned();
                    } else if let Some(key) =
                        line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'))
                        && !key.starts_with(' ')
                    {
                        section = if key == "cpu" || key == "memory" {
                            key
                        } else {
                            ""
                        };
                    } else if let Some(guest) = line.strip_prefix("    guest: ") {
                        match section {
                            "cpu" => object.2 = guest.trim().to_owned(),
                            "memory" => object.3 = guest.trim().to_owned(),
                            _ => {}
                        }
                    }
                }
            }
        }
        objects.sort();
        objects
    }

    #[test]
    fn the_lists_are_the_charts() {
        if !std::path::Path::new(CHART).is_dir() {
            println!("skipped: {CHART} not found, the lists were not compared with the chart");
            return;
        }
        let objects = chart_objects();
        let types: Vec<(&str, &str, &str)> = objects
            .iter()
            .filter(|o| o.0 == "VirtualMachineClusterInstancetype")
            .map(|o| (o.1.as_str(), o.2.as_str(), o.3.as_str()))
            .collect();
        let ours: Vec<(&str, &str, &str)> = INSTANCE_TYPES
            .iter()
            .map(|t| (t.name, t.cpu, t.memory))
            .collect();
        assert_eq!(types, ours);
        let preferences: Vec<&str> = objects
            .iter()
            .filter(|o| o.0 == "VirtualMachineClusterPreference")
            .map(|o| o.1.as_str())
            .collect();
        assert_eq!(preferences, PREFERENCES);
    }
}
