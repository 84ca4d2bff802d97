//! Instance types and preferences the templates look up in the cluster:
//! `apps/vm-instance/templates/vm.yaml` (2, 5), `apps/kubernetes/templates/cluster.yaml`
//! (532) and `apps/kubernetes-nodes/templates/nodegroup.yaml` (189) fail to
//! render when the `lookup` finds no object of that name. Which names exist
//! is cluster state; the platform installs those of
//! `system/kubevirt-instancetypes` (v1.6.2) on every variant, so a name
//! outside them is warned about, not denied: an operator may have created it.
//! A test compares the lists with that chart.

use shared::{Field, FieldError};

use shared::Findings;

/// The `VirtualMachineClusterInstancetype`s the platform installs.
const INSTANCE_TYPES: &[&str] = &[
    "cx1.2xlarge",
    "cx1.2xlarge1gi",
    "cx1.4xlarge",
    "cx1.4xlarge1gi",
    "cx1.8xlarge",
    "cx1.8xlarge1gi",
    "cx1.large",
    "cx1.large1gi",
    "cx1.medium",
    "cx1.medium1gi",
    "cx1.xlarge",
    "cx1.xlarge1gi",
    "d1.2xlarge",
    "d1.2xmedium",
    "d1.4xlarge",
    "d1.8xlarge",
    "d1.large",
    "d1.medium",
    "d1.micro",
    "d1.nano",
    "d1.small",
    "d1.xlarge",
    "gn1.2xlarge",
    "gn1.4xlarge",
    "gn1.8xlarge",
    "gn1.xlarge",
    "m1.2xlarge",
    "m1.2xlarge1gi",
    "m1.4xlarge",
    "m1.4xlarge1gi",
    "m1.8xlarge",
    "m1.8xlarge1gi",
    "m1.large",
    "m1.large1gi",
    "m1.xlarge",
    "m1.xlarge1gi",
    "n1.2xlarge",
    "n1.4xlarge",
    "n1.8xlarge",
    "n1.large",
    "n1.medium",
    "n1.xlarge",
    "o1.2xlarge",
    "o1.4xlarge",
    "o1.8xlarge",
    "o1.large",
    "o1.medium",
    "o1.micro",
    "o1.nano",
    "o1.small",
    "o1.xlarge",
    "rt1.2xlarge",
    "rt1.4xlarge",
    "rt1.8xlarge",
    "rt1.large",
    "rt1.medium",
    "rt1.micro",
    "rt1.small",
    "rt1.xlarge",
    "u1.2xlarge",
    "u1.2xmedium",
    "u1.4xlarge",
    "u1.8xlarge",
    "u1.large",
    "u1.medium",
    "u1.micro",
    "u1.nano",
    "u1.small",
    "u1.xlarge",
];

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
    for (field, shipped, what, kind, example) in [
        (
            instance_type,
            INSTANCE_TYPES,
            "an instance type",
            "VirtualMachineClusterInstancetype",
            "u1.medium",
        ),
        (
            profile,
            PREFERENCES,
            "a preference",
            "VirtualMachineClusterPreference",
            "ubuntu",
        ),
    ] {
        if let Some(name) = field
            .string()?
            .filter(|n| !n.is_empty() && !shipped.contains(n))
        {
            out.add(
                crate::rules::INSTANCE_TYPE_NOT_SHIPPED,
                field.path(),
                not_shipped(what, kind, name, example),
            );
        }
    }
    Ok(())
}

/// A node group's `instanceType`, looked up unless `resources` sets both
/// `cpu` and `memory` (`cluster.yaml` 530, `nodegroup.yaml` 187);
/// `default_instance_type` stands in when the key is absent.
pub fn node_group(
    group: &Field<'_>,
    default_instance_type: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let instance_type = group.field("instanceType")?;
    let name = match instance_type.json() {
        None => default_instance_type,
        Some(_) => instance_type.string()?.unwrap_or_default(),
    };
    let [cpu, memory] = group.field("resources")?.members(["cpu", "memory"])?;
    let sized = crate::values::truthy(cpu.json()) && crate::values::truthy(memory.json());
    if !name.is_empty() && !sized && !INSTANCE_TYPES.contains(&name) {
        out.add(
            crate::rules::INSTANCE_TYPE_NOT_SHIPPED,
            instance_type.path(),
            not_shipped(
                "an instance type",
                "VirtualMachineClusterInstancetype",
                name,
                "u1.medium",
            ),
        );
    }
    Ok(())
}

fn not_shipped(what: &str, kind: &str, name: &str, example: &str) -> String {
    format!(
        "{name:?} is not {what} Cozystack installs (system/kubevirt-instancetypes): the chart looks it up and \
         fails to render unless the cluster has a {kind} of that name. Use one it installs, such as {example}, or \
         create the {kind} first."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHART: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cozystack-v1.6.2/charts/system/kubevirt-instancetypes/templates"
    );

    /// The `metadata.name` of every object of `kind` in the chart's templates.
    fn chart_names(kind: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut files: Vec<_> = std::fs::read_dir(CHART)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let mut current = None;
            for line in std::fs::read_to_string(file).unwrap().lines() {
                if let Some(found) = line.strip_prefix("kind: ") {
                    current = Some(found.trim() == kind);
                } else if let Some(name) = line.strip_prefix("  name: ")
                    && current.take() == Some(true)
                {
                    names.push(name.trim().to_owned());
                }
            }
        }
        names.sort();
        names
    }

    #[test]
    fn the_lists_are_the_charts() {
        if !std::path::Path::new(CHART).is_dir() {
            println!("skipped: {CHART} not found, the lists were not compared with the chart");
            return;
        }
        assert_eq!(
            chart_names("VirtualMachineClusterInstancetype"),
            INSTANCE_TYPES
        );
        assert_eq!(chart_names("VirtualMachineClusterPreference"), PREFERENCES);
    }
}
