//! Kubelet reservations of a node group, as the node-group templates check
//! them: `packages/apps/kubernetes/templates/cluster.yaml` (582–691) for
//! each `nodeGroups.<g>`, and `packages/apps/kubernetes-nodes/templates/
//! nodegroup.yaml` (235–344) for a KubernetesNodes pool, the same code.
//!
//! The template validates the formats of `kubelet.*` overrides, that they
//! are positive, the eviction thresholds (both percentages in (0, 100] or
//! both quantities, hard below soft), and that what is reserved is less
//! than the node: its memory and CPU are `resources.memory`/`cpu` when set,
//! else the instance type's (`spec.memory.guest`, `spec.cpu.guest`, read by
//! a `lookup`). The sizes of the instance types the platform installs are
//! known without the cluster (instance_types.rs); only another instance
//! type's size is a cluster read, and then the comparison is not made.

use shared::{Field, FieldError, FieldPath};

use shared::Findings;
use sprig::Decimal;
use sprig::cozy_lib::to_decimal;
use std::cmp::Ordering;

use crate::values::{is_digits, truthy};

/// The eviction thresholds when a group does not set them (the template's
/// `default`s).
const EVICTION_HARD: &str = "7%";
const EVICTION_SOFT: &str = "10%";

/// `^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`,
/// the template's memory-quantity pattern.
fn is_memory_quantity(text: &str) -> bool {
    let mut rest = text;
    for suffix in [
        "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "T", "P", "E",
    ] {
        if let Some(number) = text.strip_suffix(suffix) {
            rest = number;
            break;
        }
    }
    let (number, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    is_unsigned_decimal(number)
        && exponent.is_none_or(|e| is_digits(e.strip_prefix(['+', '-']).unwrap_or(e)))
}

/// `^([0-9]+m|[0-9]+(\.[0-9]+)?)$`, the template's CPU pattern.
fn is_cpu_quantity(text: &str) -> bool {
    text.strip_suffix('m')
        .map_or_else(|| is_unsigned_decimal(text), is_digits)
}

/// `[0-9]+(\.[0-9]+)?`
fn is_unsigned_decimal(text: &str) -> bool {
    match text.split_once('.') {
        Some((whole, fraction)) => is_digits(whole) && is_digits(fraction),
        None => is_digits(text),
    }
}

/// Sprig's `float64` of a string, as a decimal where no float rounds it
/// ([`Decimal::float_exact`]); `None` otherwise: the comparison is not
/// made.
fn float64(text: &str) -> Option<Decimal> {
    Decimal::parse(text)?.float_exact()
}

/// `kubernetes.cpuToMillicores` (`apps/kubernetes/templates/_resources.tpl`):
/// `100m` → `100`; anything else `mulf (float64 x) 1000.0 | int | toString`
/// (`1.5` → `1500`, `abc` → `0`). The template returns a string, which the
/// callers read with `float64` or `int`.
fn cpu_to_millicores(text: &str) -> Option<String> {
    if let Some(millis) = text.strip_suffix('m') {
        return Some(millis.to_owned());
    }
    let cores = float64(text)?;
    let millis = cores.times(Decimal::int(1000))?.float_exact()?;
    Some(millis.truncated()?.to_string())
}

/// The node's memory or CPU as the template resolves it.
enum Size {
    /// `resources.memory` / `resources.cpu`, or an installed instance
    /// type's, as `toString` writes it.
    Known(String),
    /// Another instance type's: a cluster read.
    InstanceType,
    /// Neither is set.
    Unknown,
}

/// One override of `kubelet`, when set (the template's `if .value`).
struct Override<'a> {
    key: &'static str,
    field: Field<'a>,
    value: Option<&'a str>,
}

impl<'a> Override<'a> {
    fn read(kubelet: &Field<'a>, key: &'static str) -> Result<Self, FieldError> {
        let field = kubelet.field(key)?;
        let value = field.string()?.filter(|v| !v.is_empty());
        Ok(Self { key, field, value })
    }
}

/// The group's CPU or memory: explicit, the instance type's (`shipped`
/// when the platform installs it), or none.
fn size(
    resource: &Field<'_>,
    instance_type: bool,
    shipped: Option<&str>,
) -> Result<Size, FieldError> {
    if truthy(resource.json()) {
        // Lists, maps and booleans are values-schema's (a quantity).
        let text =
            resource
                .json()
                .and_then(sprig::to_string)
                .ok_or_else(|| FieldError::WrongType {
                    path: resource.path(),
                    expected: "a quantity",
                    found: resource.kind().unwrap_or(shared::Kind::Null),
                })?;
        Ok(Size::Known(text))
    } else if let (true, Some(size)) = (instance_type, shipped) {
        Ok(Size::Known(size.to_owned()))
    } else if instance_type {
        Ok(Size::InstanceType)
    } else {
        Ok(Size::Unknown)
    }
}

/// The rule over one group: `name` as the template's messages call it,
/// `group` the field holding `instanceType`, `resources` and `kubelet`,
/// `default_instance_type` the chart default when the key is absent.
pub fn check(
    name: &str,
    group: &Field<'_>,
    default_instance_type: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let [instance_type, resources, kubelet] =
        group.members(["instanceType", "resources", "kubelet"])?;
    let type_name = if instance_type.is_present() {
        instance_type.string().ok().flatten()
    } else {
        Some(default_instance_type)
    };
    let has_instance_type = if instance_type.is_present() {
        truthy(instance_type.json())
    } else {
        !default_instance_type.is_empty()
    };
    let shipped = type_name.and_then(crate::instance_types::shipped);
    let [cpu, memory] = resources.members(["cpu", "memory"])?;
    let node_memory = size(&memory, has_instance_type, shipped.map(|t| t.memory))?;
    let node_cpu = size(&cpu, has_instance_type, shipped.map(|t| t.cpu))?;
    // Where a comparison with the node points when no override is to blame:
    // the resource, or the instance type it came from.
    let memory_from = if truthy(memory.json()) {
        &memory
    } else {
        &instance_type
    };
    let cpu_from = if truthy(cpu.json()) {
        &cpu
    } else {
        &instance_type
    };
    let system_memory = Override::read(&kubelet, "systemReservedMemory")?;
    let kube_memory = Override::read(&kubelet, "kubeReservedMemory")?;
    let system_cpu = Override::read(&kubelet, "systemReservedCpu")?;
    let kube_cpu = Override::read(&kubelet, "kubeReservedCpu")?;
    let hard = Override::read(&kubelet, "evictionHardMemory")?;
    let soft = Override::read(&kubelet, "evictionSoftMemory")?;

    let mut memory_ok = true;
    for reserved in [&system_memory, &kube_memory] {
        memory_ok &= reservation(name, reserved, Resource::Memory, out);
    }
    let mut cpu_ok = true;
    for reserved in [&system_cpu, &kube_cpu] {
        cpu_ok &= reservation(name, reserved, Resource::Cpu, out);
    }
    memory_ok &= eviction(name, &hard, &soft, out);
    let hard_value = hard.value.unwrap_or(EVICTION_HARD);

    match &node_memory {
        Size::Known(text) if memory_ok => {
            memory_fits(
                name,
                text,
                [&system_memory, &kube_memory],
                hard_value,
                memory_from,
                &kubelet,
                out,
            );
        }
        Size::Unknown => {
            let set: Vec<&str> = [&system_memory, &kube_memory, &hard, &soft]
                .into_iter()
                .filter(|o| o.value.is_some())
                .map(|o| o.key)
                .collect();
            if !set.is_empty() {
                out.add(
                    crate::rules::KUBELET_RESERVATIONS,
                    kubelet.path(),
                    format!(
                        "nodeGroup {name}: kubelet memory reservations require effective memory to validate — set \
                         resources.memory or instanceType (the chart fails to render; set here: {}).",
                        set.join(", ")
                    ),
                );
            }
        }
        _ => {}
    }
    match &node_cpu {
        Size::Known(text) if cpu_ok => {
            cpu_fits(
                name,
                text,
                [&system_cpu, &kube_cpu],
                cpu_from,
                &kubelet,
                out,
            );
        }
        Size::Unknown if system_cpu.value.is_some() || kube_cpu.value.is_some() => {
            out.add(
                crate::rules::KUBELET_RESERVATIONS,
                kubelet.path(),
                format!(
                    "nodeGroup {name}: cannot validate kubelet CPU reservations without effective CPU — set \
                     resources.cpu or a valid instanceType (the chart fails to render)."
                ),
            );
        }
        _ => {}
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Resource {
    Memory,
    Cpu,
}

/// The format and sign of one reservation override; whether it is fine.
fn reservation(
    name: &str,
    reserved: &Override<'_>,
    resource: Resource,
    out: &mut Findings,
) -> bool {
    let Some(value) = reserved.value else {
        return true;
    };
    let key = reserved.key;
    let (well_formed, hint) = match resource {
        Resource::Memory => (
            is_memory_quantity(value),
            "a valid Kubernetes memory quantity (e.g. 128Mi, 1Gi, 1e9, 500e6)",
        ),
        Resource::Cpu => (
            is_cpu_quantity(value),
            "a valid Kubernetes CPU quantity (integer millicores like 100m, or decimal cores like 0.5, 1)",
        ),
    };
    if !well_formed {
        out.add(
            crate::rules::KUBELET_RESERVATIONS,
            reserved.field.path(),
            format!("nodeGroup {name}: invalid {key} value {value:?} — must be {hint} (the chart fails to render)."),
        );
        return false;
    }
    let amount = match resource {
        Resource::Memory => to_decimal(value),
        Resource::Cpu => cpu_to_millicores(value).and_then(|millis| float64(&millis)),
    };
    if amount.is_some_and(|amount| !amount.is_positive()) {
        let rounded = match resource {
            Resource::Cpu => " (the template counts whole millicores)",
            Resource::Memory => "",
        };
        out.add(
            crate::rules::KUBELET_RESERVATIONS,
            reserved.field.path(),
            format!(
                "nodeGroup {name}: {key} must be a positive value, got {value}{rounded} (the chart fails to render)."
            ),
        );
        return false;
    }
    amount.is_some()
}

/// Whether a percentage threshold's number is `^[0-9]+(\.[0-9]+)?$`.
fn percentage(text: &str) -> Option<&str> {
    text.strip_suffix('%')
        .filter(|number| is_unsigned_decimal(number))
}

/// The eviction thresholds, resolved with their defaults; whether they are
/// fine.
fn eviction(name: &str, hard: &Override<'_>, soft: &Override<'_>, out: &mut Findings) -> bool {
    let hard_value = hard.value.unwrap_or(EVICTION_HARD);
    let soft_value = soft.value.unwrap_or(EVICTION_SOFT);
    // The field a comparison's message points at: the threshold the group
    // set (hard when both are).
    let set = if hard.value.is_none() && soft.value.is_some() {
        soft
    } else {
        hard
    };
    let mut deny = |at: FieldPath, message: String| {
        out.add(
            crate::rules::KUBELET_RESERVATIONS,
            at,
            format!("nodeGroup {name}: {message} (the chart fails to render)."),
        );
    };
    let mut ok = true;
    for (threshold, value, example) in [(hard, hard_value, "7%"), (soft, soft_value, "10%")] {
        if !value.ends_with('%') && !is_memory_quantity(value) {
            deny(
                threshold.field.path(),
                format!(
                    "invalid {} value {value:?} — must be a percentage (e.g. {example}) or a valid Kubernetes memory \
                     quantity (e.g. 500Mi, 1Gi, 1e9)",
                    threshold.key
                ),
            );
            ok = false;
        }
    }
    if !ok {
        return false;
    }
    match (hard_value.ends_with('%'), soft_value.ends_with('%')) {
        (true, true) => {
            let hundred = Decimal::int(100);
            // Each percentage's number, checked as the template checks it.
            let mut number = |threshold: &Override<'_>, value: &str| -> Option<Decimal> {
                let Some(text) = percentage(value) else {
                    deny(
                        threshold.field.path(),
                        format!(
                            "{} percentage value {:?} is not a valid number",
                            threshold.key,
                            value.trim_end_matches('%')
                        ),
                    );
                    return None;
                };
                let parsed = float64(text)?;
                let over = parsed.compare(hundred) == Some(Ordering::Greater);
                if !parsed.is_positive() || over {
                    deny(
                        threshold.field.path(),
                        format!(
                            "{} percentage must be greater than 0 and at most 100, got {text}%",
                            threshold.key
                        ),
                    );
                    return None;
                }
                Some(parsed)
            };
            let Some(hard_number) = number(hard, hard_value) else {
                return false;
            };
            let Some(soft_number) = number(soft, soft_value) else {
                return false;
            };
            let order = hard_number.compare(soft_number);
            if order.is_some_and(Ordering::is_ge) {
                deny(
                    set.field.path(),
                    format!(
                        "evictionHardMemory ({hard_value}) must be strictly less than evictionSoftMemory ({soft_value})"
                    ),
                );
                return false;
            }
            order.is_some()
        }
        (false, false) => match (to_decimal(hard_value), to_decimal(soft_value)) {
            (Some(h), Some(s)) if h.compare(s).is_some_and(Ordering::is_ge) => {
                deny(
                    set.field.path(),
                    format!(
                        "evictionHardMemory ({hard_value}) must be strictly less than evictionSoftMemory ({soft_value})"
                    ),
                );
                false
            }
            (Some(_), Some(_)) => true,
            _ => false,
        },
        _ => {
            deny(
                set.field.path(),
                format!(
                    "evictionHardMemory ({hard_value}) and evictionSoftMemory ({soft_value}) must use the same unit \
                     type (both percentage or both absolute)"
                ),
            );
            false
        }
    }
}

/// The automatic reservation: 5 % of the node, within `[low, high]`.
fn automatic(node: i64, low: i64, high: i64) -> Option<i64> {
    Some((node.checked_mul(5)? / 100).clamp(low, high))
}

/// Reserved memory (system + kube + hard eviction) against the node's.
fn memory_fits(
    name: &str,
    node: &str,
    [system, kube]: [&Override<'_>; 2],
    hard: &str,
    memory: &Field<'_>,
    kubelet: &Field<'_>,
    out: &mut Findings,
) -> Option<()> {
    let node_bytes = to_decimal(node)?;
    let node_mi = node_bytes.truncated_quotient(Decimal::int(1_048_576))?;
    let auto = automatic(node_mi, 256, 1024)?;
    let auto = format!("{auto}Mi");
    let system_value = system.value.unwrap_or(&auto);
    let kube_value = kube.value.unwrap_or(&auto);
    let eviction = match hard.strip_suffix('%') {
        Some(pct) => {
            let fraction = float64(pct)?.divided_by(Decimal::int(100))?.float_exact()?;
            node_bytes.times(fraction)?.float_exact()?
        }
        None => to_decimal(hard)?,
    };
    let total = to_decimal(system_value)?
        .plus(to_decimal(kube_value)?)?
        .float_exact()?
        .plus(eviction)?
        .float_exact()?;
    if total.compare(node_bytes)?.is_ge() {
        let at = if system.value.is_some() || kube.value.is_some() {
            kubelet.path()
        } else {
            memory.path()
        };
        out.add(
            crate::rules::KUBELET_RESERVATIONS,
            at,
            format!(
                "nodeGroup {name}: total reserved memory (systemReservedMemory={system_value} + \
                 kubeReservedMemory={kube_value} + evictionHardMemory={hard}) must be less than effective node memory \
                 ({node}) (the chart fails to render). Give the node more memory or reserve less."
            ),
        );
    }
    Some(())
}

/// Reserved CPU (system + kube) against the node's.
fn cpu_fits(
    name: &str,
    node: &str,
    [system, kube]: [&Override<'_>; 2],
    cpu: &Field<'_>,
    kubelet: &Field<'_>,
    out: &mut Findings,
) -> Option<()> {
    let node_millis = sprig::int(&cpu_to_millicores(node)?);
    let auto = format!("{}m", automatic(node_millis, 50, 500)?);
    let system_value = system.value.unwrap_or(&auto);
    let kube_value = kube.value.unwrap_or(&auto);
    let millis = |value: &str| cpu_to_millicores(value).and_then(|m| float64(&m));
    let total = millis(system_value)?
        .plus(millis(kube_value)?)?
        .float_exact()?;
    if total.compare(Decimal::int(node_millis))?.is_ge() {
        let at = if system.value.is_some() || kube.value.is_some() {
            kubelet.path()
        } else {
            cpu.path()
        };
        out.add(
            crate::rules::KUBELET_RESERVATIONS,
            at,
            format!(
                "nodeGroup {name}: total reserved CPU (systemReservedCpu={system_value} + kubeReservedCpu={kube_value}) \
                 must be less than effective node CPU ({node} cores) (the chart fails to render). Give the node more \
                 CPU or reserve less."
            ),
        );
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_as_the_template() {
        for ok in ["128Mi", "1Gi", "1e9", "500e6", "1.5Gi", "1e+3k", "7"] {
            assert!(is_memory_quantity(ok), "{ok}");
        }
        for bad in [
            "", "1GB", "-1Gi", ".5Gi", "1.Gi", "1e", "Mi", "1 Gi", "1Gi\n",
        ] {
            assert!(!is_memory_quantity(bad), "{bad:?}");
        }
        for ok in ["100m", "0.5", "1", "2.25"] {
            assert!(is_cpu_quantity(ok), "{ok}");
        }
        for bad in ["1.5m", "m", "1k", "-1", "0.5m", ""] {
            assert!(!is_cpu_quantity(bad), "{bad:?}");
        }
    }

    #[test]
    fn cpu_as_millicores() {
        assert_eq!(cpu_to_millicores("250m").as_deref(), Some("250"));
        assert_eq!(cpu_to_millicores("1.5").as_deref(), Some("1500"));
        assert_eq!(cpu_to_millicores("0.0004").as_deref(), Some("0"));
        assert_eq!(cpu_to_millicores("2k").as_deref(), Some("0"));
        assert_eq!(cpu_to_millicores("inf"), None);
        assert_eq!(cpu_to_millicores("1234567890123456"), None);
    }

    #[test]
    fn automatic_reservations() {
        assert_eq!(automatic(1024, 256, 1024), Some(256));
        assert_eq!(automatic(32768, 256, 1024), Some(1024));
        assert_eq!(automatic(8000, 256, 1024), Some(400));
        assert_eq!(automatic(2000, 50, 500), Some(100));
    }
}
