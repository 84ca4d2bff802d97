//! The ResourceQuota `tenant-quota` the tenant chart renders, which is
//! what cozystack-controller counts.
//!
//! v1.6.2 `internal/controller/tenantquota/reconciler.go` (`snapshot`)
//! takes a tenant's budget from its namespace's `tenant-quota`
//! `.spec.hard`, not from the declared values, and counts the tenant as
//! bounded exactly when that list is not empty. The chart renders it
//! (`packages/apps/tenant/templates/quota.yaml`) only
//! `if .Values.resourceQuotas`, through `cozy-lib.resources.flatten` and
//! `sanitize` (`packages/library/cozy-lib/templates/_resources.tpl`):
//!
//! - `cpu` renders `limits.cpu` as written and `requests.cpu` as the
//!   declared value (`toFloat`: suffix `m`, `k` … `E`, `Ki` … `Ei`
//!   multiplied out; any other text read by spf13/cast, 0 when it cannot)
//!   divided by the cpu allocation ratio with Sprig's decimal `divf`,
//!   through `toString` (the [`sprig`] crate);
//! - `memory` and `ephemeral-storage` the same with their ratios, then
//!   `int` (truncated to whole bytes);
//! - `storage` only `requests.storage`; `pods`, `services`,
//!   `services.loadbalancers`, `services.nodeports`, `services.clusterip`,
//!   `configmaps`, `secrets`, `persistentvolumeclaims`,
//!   `replicationcontrollers`, `resourcequotas` as they are; any other key
//!   both `limits.<key>` and `requests.<key>`, as written;
//! - kube-apiserver then reads each value with `ParseQuantity`, rounding
//!   up to the nano.
//!
//! The ratios are `_cluster`'s `cpu-allocation-ratio`,
//! `memory-allocation-ratio` and `ephemeral-storage-allocation-ratio`
//! (defaults 10, 1, 40), which the platform chart renders
//! (`packages/core/platform/templates/apps.yaml`, `| quote`) from the
//! Package `cozystack.cozystack-platform`'s
//! `spec.components.platform.values.resources` (`values.yaml` defaults).
//!
//! Before rendering, the platform's Helm (v4.1.1, in helm-controller)
//! drops every `null` of `resourceQuotas` (a map of nulls renders no
//! quota), and validates the rest against the chart's schema (an integer,
//! or a string of the quantity pattern). Values it refuses fail the
//! HelmRelease; the controller then reads whatever `tenant-quota` an
//! earlier release left, if any, which no rule can see ([`Plan::Refused`]).

use shared::{FieldPath, Value};

use crate::quantity::Quantity;
use sprig::{cast_float, divf, format_int, format_v, mulf};

pub use crate::etcd::{PACKAGE_API_VERSION, PACKAGE_KIND, PLATFORM_PACKAGE};

/// Where the Package holds the ratios.
pub const RESOURCES: &str = "spec.components.platform.values.resources";

/// The keys the chart renders as they are.
const RAW_KEYS: &[&str] = &[
    "pods",
    "services",
    "services.loadbalancers",
    "services.nodeports",
    "services.clusterip",
    "configmaps",
    "secrets",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "resourcequotas",
];

/// `renderedLimitKey` (cozystack-api) and the limits side of `flatten`:
/// the rendered key that carries a declared key's value as written.
pub fn limit_key(key: &str) -> String {
    match key {
        "storage" => "requests.storage".to_owned(),
        raw if RAW_KEYS.contains(&raw) => raw.to_owned(),
        other => format!("limits.{other}"),
    }
}

/// One allocation ratio of the platform, as the tenant chart reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// Its key under [`RESOURCES`].
    pub field: &'static str,
    /// The float the chart divides by, or the value as the Package holds
    /// it when the chart cannot divide by it.
    pub value: Result<f64, String>,
}

impl Ratio {
    /// A Package value through `| quote` into `_cluster`, `dig`, `include`
    /// and Sprig's `float64`: a number is itself; a string is read by
    /// spf13/cast, 0 when it cannot be; `null` (which Helm 4.1.1 deletes,
    /// so `quote` renders nothing) and anything else are not numbers. Only
    /// a positive, finite ratio gives a quota Kubernetes applies (a zero
    /// panics `divf`, a negative one makes negative requests).
    fn read(field: &'static str, value: Option<&Value>, default: f64) -> Self {
        let float = match value {
            None => Some(default),
            Some(Value::Number(number)) => number.as_f64(),
            Some(Value::String(text)) => Some(cast_float(text)),
            Some(_) => None,
        };
        let value = match float {
            Some(float) if float.is_finite() && float > 0.0 => Ok(float),
            _ => Err(value.map_or_else(String::new, Value::to_string)),
        };
        Self { field, value }
    }

    /// Why the chart cannot use it.
    pub fn problem(&self) -> Option<String> {
        self.value.as_ref().err().map(|written| {
            format!(
                "Package {PLATFORM_PACKAGE} sets {RESOURCES}.{} to {written}, which the tenant chart \
                 cannot divide by, so no tenant quota that needs it renders",
                self.field
            )
        })
    }

    /// A short description for a message: `cpuAllocationRatio 10`.
    pub fn describe(&self) -> String {
        match &self.value {
            Ok(value) => format!("{} {}", self.field, format_v(*value)),
            Err(written) => format!("{} {written}", self.field),
        }
    }
}

/// The three ratios `sanitize` divides by.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratios {
    pub cpu: Ratio,
    pub memory: Ratio,
    pub ephemeral_storage: Ratio,
}

impl Ratios {
    /// The ratios of the platform Package (its `values.yaml` defaults
    /// where it sets none, or where there is no Package).
    pub fn of_package(package: Option<&Value>) -> Self {
        let resources = package.and_then(|p| FieldPath::parse(RESOURCES).resolve(p));
        let field = |name: &'static str, default: f64| match resources {
            None => Ratio::read(name, None, default),
            Some(Value::Object(values)) => match values.get(name) {
                // `null` deletes the key and its default (Helm 4.1.1).
                Some(Value::Null) => Ratio {
                    field: name,
                    value: Err("null".to_owned()),
                },
                found => Ratio::read(name, found, default),
            },
            // The platform chart cannot read `.Values.resources.<ratio>`
            // out of a `null` (deleted) or a non-map.
            Some(other) => Ratio {
                field: name,
                value: Err(format!("{other} (in {RESOURCES})")),
            },
        };
        Self {
            cpu: field("cpuAllocationRatio", 10.0),
            memory: field("memoryAllocationRatio", 1.0),
            ephemeral_storage: field("ephemeralStorageAllocationRatio", 40.0),
        }
    }
}

/// A declared value as Helm holds it after coalescing.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Text(String),
    /// Helm reads JSON numbers as float64.
    Number(f64),
}

impl Input {
    /// `$v | toString`: what the chart writes as the limit.
    fn written(&self) -> String {
        match self {
            Input::Text(text) => text.clone(),
            Input::Number(number) => format_v(*number),
        }
    }

    /// `cozy-lib.resources.toFloat`, read back with `float64`: a number
    /// is itself (times 1).
    fn to_float(&self) -> Option<f64> {
        match self {
            Input::Number(number) => mulf(*number, 1.0),
            Input::Text(text) => sprig::cozy_lib::to_float(text),
        }
    }
}

/// What the chart makes of one tenant's `resourceQuotas`.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// No `tenant-quota`: no quotas, or only `null`s (listed), which Helm
    /// 4.1.1 drops.
    NoQuota { nulls: Vec<String> },
    /// The HelmRelease fails at `key` (empty: the map itself).
    Refused { key: String, why: String },
    /// A `tenant-quota` with these values.
    Quota(Vec<(String, Input)>),
}

/// One rendered key of `tenant-quota`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hard {
    /// The declared key it comes from.
    pub declared: String,
    pub value: Quantity,
    /// Whether the chart derives it (requests of `cpu`, `memory`,
    /// `ephemeral-storage`) rather than copying the declared value.
    pub derived: bool,
}

/// `tenant-quota`'s `.spec.hard`: each rendered key once, in the order the
/// declared keys come.
pub type HardList = Vec<(String, Hard)>;

impl Plan {
    /// The chart's view of `resourceQuotas` (as Helm holds them: the
    /// HelmRelease values, or a Tenant's spec).
    pub fn of(map: Option<&Value>) -> Self {
        let entries = match map {
            None | Some(Value::Null) => return Plan::NoQuota { nulls: Vec::new() },
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                return Plan::Refused {
                    key: String::new(),
                    why: format!("{other} is not a map, which the chart's schema refuses"),
                };
            }
        };
        let mut nulls = Vec::new();
        let mut inputs = Vec::new();
        for (key, value) in entries {
            let input = match value {
                Value::Null => {
                    nulls.push(key.clone());
                    continue;
                }
                Value::Number(number) => match number.as_f64() {
                    Some(float) if float.fract() == 0.0 => Input::Number(float),
                    _ => return refused(key, format!("{number} is a number but not an integer")),
                },
                Value::String(text) if matches_pattern(text) => Input::Text(text.clone()),
                Value::String(text) => {
                    let mut why = format!("{value} does not match the chart's quantity pattern");
                    if text.trim() != text {
                        why.push_str(
                            " (cozystack-api trims the whitespace, Helm's schema does not)",
                        );
                    }
                    return refused(key, why);
                }
                other => {
                    return refused(key, format!("{other} is neither an integer nor a string"));
                }
            };
            // kube-apiserver applies only quantities, and none negative.
            let written = input.written();
            match Quantity::parse(&written) {
                Some(limit) if !limit.is_negative() => inputs.push((key.clone(), input)),
                Some(_) => {
                    return refused(
                        key,
                        format!("{written} is negative, which a ResourceQuota refuses"),
                    );
                }
                None => {
                    return refused(key, format!("{written} is not a quantity Kubernetes reads"));
                }
            }
        }
        if inputs.is_empty() {
            Plan::NoQuota { nulls }
        } else {
            Plan::Quota(inputs)
        }
    }

    /// Whether the controller counts the tenant as bounded.
    pub fn bounded(&self) -> bool {
        matches!(self, Plan::Quota(_))
    }

    /// `tenant-quota`'s `.spec.hard`, every value as kube-apiserver reads
    /// it; a ratio the chart cannot divide by is the error. A derived
    /// value the chart cannot compute (a float past the range) is left
    /// out.
    pub fn hard(&self, ratios: &Ratios) -> Result<HardList, Ratio> {
        let mut hard = HardList::new();
        let Plan::Quota(inputs) = self else {
            return Ok(hard);
        };
        for (key, input) in inputs {
            let Some(limit) = Quantity::parse(&input.written()) else {
                continue;
            };
            let copied = |hard: &mut HardList, rendered: String| {
                hard.push((
                    rendered,
                    Hard {
                        declared: key.clone(),
                        value: limit,
                        derived: false,
                    },
                ));
            };
            let (ratio, whole) = match key.as_str() {
                "cpu" => (&ratios.cpu, false),
                "memory" => (&ratios.memory, true),
                "ephemeral-storage" => (&ratios.ephemeral_storage, true),
                raw if raw == "storage" || RAW_KEYS.contains(&raw) => {
                    copied(&mut hard, limit_key(raw));
                    continue;
                }
                other => {
                    copied(&mut hard, format!("limits.{other}"));
                    copied(&mut hard, format!("requests.{other}"));
                    continue;
                }
            };
            copied(&mut hard, format!("limits.{key}"));
            let Ok(divisor) = ratio.value else {
                return Err(ratio.clone());
            };
            if let Some(value) = derive(input, divisor, whole) {
                hard.push((
                    format!("requests.{key}"),
                    Hard {
                        declared: key.clone(),
                        value,
                        derived: true,
                    },
                ));
            }
        }
        Ok(hard)
    }
}

fn refused(key: &str, why: String) -> Plan {
    Plan::Refused {
        key: key.to_owned(),
        why,
    }
}

/// `divf (toFloat v) ratio`, then `toString` (cpu) or `int | toString`,
/// read by `ParseQuantity`.
fn derive(input: &Input, ratio: f64, whole: bool) -> Option<Quantity> {
    let quotient = divf(input.to_float()?, ratio)?;
    let text = if whole {
        format_int(quotient)
    } else {
        format_v(quotient)
    };
    Quantity::parse(&text).filter(|q| !q.is_negative())
}

/// The chart's `values.schema.json` pattern for a `resourceQuotas` string:
/// `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`.
fn matches_pattern(text: &str) -> bool {
    /// The length of `([0-9]+(\.[0-9]*)?)|(\.[0-9]+)` at the start.
    fn number(text: &str) -> Option<usize> {
        let whole = text.bytes().take_while(u8::is_ascii_digit).count();
        let rest = text.get(whole..)?;
        let fraction = match rest.strip_prefix('.') {
            Some(after) => 1 + after.bytes().take_while(u8::is_ascii_digit).count(),
            None => 0,
        };
        (whole > 0 || fraction > 1).then_some(whole + fraction)
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let Some(suffix) = number(unsigned).and_then(|n| unsigned.get(n..)) else {
        return false;
    };
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        exponent => exponent
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .is_some_and(|e| number(e) == Some(e.len())),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use serde_json::json;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    fn rendered(values: Value, ratios: &Ratios) -> BTreeMap<String, Quantity> {
        match Plan::of(Some(&values)).hard(ratios) {
            Ok(hard) => hard.into_iter().map(|(k, h)| (k, h.value)).collect(),
            Err(ratio) => panic!("{ratio:?}"),
        }
    }

    fn ratios(cpu: Value, memory: Value) -> Ratios {
        Ratios::of_package(Some(
            &json!({"spec": {"components": {"platform": {"values": {
                "resources": {"cpuAllocationRatio": cpu, "memoryAllocationRatio": memory}
            }}}}}),
        ))
    }

    fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), q(v))).collect()
    }

    #[test]
    fn renders_what_helm_renders() {
        // Each expectation is the tenant chart rendered by Helm (the
        // oracle's SDK) with these values, then read by ParseQuantity.
        let defaults = Ratios::of_package(None);
        assert_eq!(
            rendered(json!({"cpu": "3.3"}), &defaults),
            expect(&[("limits.cpu", "3.3"), ("requests.cpu", "0.33")])
        );
        assert_eq!(
            rendered(
                json!({"cpu": 3, "memory": "1.5Gi", "ephemeral-storage": "3Gi", "storage": "10Gi",
                       "pods": 10, "services.loadbalancers": "2", "nvidia.com/gpu": 1}),
                &defaults
            ),
            expect(&[
                ("limits.cpu", "3"),
                ("requests.cpu", "0.3"),
                ("limits.memory", "1.5Gi"),
                ("requests.memory", "1610612736"),
                ("limits.ephemeral-storage", "3Gi"),
                ("requests.ephemeral-storage", "80530636"),
                ("requests.storage", "10Gi"),
                ("pods", "10"),
                ("services.loadbalancers", "2"),
                ("limits.nvidia.com/gpu", "1"),
                ("requests.nvidia.com/gpu", "1"),
            ])
        );
        let three = ratios(json!("3"), json!(3));
        assert_eq!(
            rendered(json!({"cpu": "250m", "memory": "1Gi"}), &three),
            expect(&[
                ("limits.cpu", "250m"),
                ("requests.cpu", "83333334n"),
                ("limits.memory", "1Gi"),
                ("requests.memory", "357913941"),
            ])
        );
        // A suffix toFloat does not know reads as 0; `1e3` as 1000.
        assert_eq!(
            rendered(json!({"cpu": "100u"}), &defaults),
            expect(&[("limits.cpu", "100u"), ("requests.cpu", "0")])
        );
        assert_eq!(
            rendered(json!({"cpu": "10000000", "memory": "100m"}), &defaults),
            expect(&[
                ("limits.cpu", "10000000"),
                ("requests.cpu", "1e+06"),
                ("limits.memory", "100m"),
                ("requests.memory", "0"),
            ])
        );
        let odd = ratios(json!(2.5), json!("1.5"));
        assert_eq!(
            rendered(json!({"cpu": "1", "memory": "1Gi"}), &odd),
            expect(&[
                ("limits.cpu", "1"),
                ("requests.cpu", "400m"),
                ("limits.memory", "1Gi"),
                ("requests.memory", "715827882"),
            ])
        );
    }

    #[test]
    fn nulls_are_dropped_and_bad_values_refused() {
        assert_eq!(
            Plan::of(Some(&json!({"cpu": null}))),
            Plan::NoQuota {
                nulls: vec!["cpu".to_owned()]
            }
        );
        assert!(Plan::of(Some(&json!({"cpu": null, "memory": "1Gi"}))).bounded());
        assert!(!Plan::of(Some(&json!({}))).bounded());
        assert!(!Plan::of(None).bounded());
        for bad in [
            json!({"cpu": " 2"}),
            json!({"cpu": 3.3}),
            json!({"cpu": true}),
            json!({"cpu": "-1"}),
            json!({"cpu": "1e1.5"}),
            json!(["cpu"]),
        ] {
            assert!(
                matches!(Plan::of(Some(&bad)), Plan::Refused { .. }),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_pattern_is_the_schemas() {
        for good in [
            "1", "+1", "-1", "1.", ".5", "1.5Gi", "2E", "1e3", "1E-3", "1e.5", "1e1.5", "0",
        ] {
            assert!(matches_pattern(good), "{good}");
        }
        for bad in [
            "", " 1", "1 ", ".", "1Ki5", "1e", "e3", "1ki", "1.2.3", "+", "1KiB",
        ] {
            assert!(!matches_pattern(bad), "{bad}");
        }
    }

    #[test]
    fn ratios_follow_the_package() {
        let defaults = Ratios::of_package(None);
        assert_eq!(defaults.cpu.value, Ok(10.0));
        assert_eq!(defaults.memory.value, Ok(1.0));
        assert_eq!(defaults.ephemeral_storage.value, Ok(40.0));
        let set = ratios(json!("4"), Value::Null);
        assert_eq!(set.cpu.value, Ok(4.0));
        assert_eq!(set.memory.value, Err("null".to_owned()));
        assert_eq!(set.ephemeral_storage.value, Ok(40.0));
        assert!(ratios(json!(0), json!(1)).cpu.problem().is_some());
        assert!(ratios(json!("many"), json!(1)).cpu.problem().is_some());
        let broken = Ratios::of_package(Some(
            &json!({"spec": {"components": {"platform": {"values": {
                "resources": null
            }}}}}),
        ));
        assert!(broken.cpu.value.is_err());
    }
}
