//! The static checks: everything cozystack-api's `validateSecurityGroup`
//! checks, with its field paths and messages (apimachinery's
//! `<path>: Invalid value: "<v>": <detail>` form), and what selects nothing
//! although cozystack-api accepts it.
//!
//! One walk over the object does both, and collects the references that
//! passed, for the existence checks that follow.

use shared::catalogue::{APP_KINDS, APPS_GROUP, app_kind_by_plural};
use shared::validators::{
    check_label_value, check_qualified_name, is_cidr_or_ip, is_cilium_protocol,
    is_dns1123_subdomain, is_reserved_cilium_entity, port_errors,
};
use shared::{Field, FieldError, Review};

use crate::settings::Settings;

/// A reference to an application that passed the static checks.
#[derive(Debug, Clone, PartialEq)]
pub struct AppTarget<'a> {
    /// The reference (`spec.attachments[0]`).
    pub reference: Field<'a>,
    /// The list it is in (`spec.attachments`).
    pub list: Field<'a>,
    pub kind: &'a str,
    pub name: &'a str,
    /// An attachment rather than a `fromApp`/`toApp` peer.
    pub attachment: bool,
}

/// A `fromSG`/`toSG` peer that passed the static checks.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTarget<'a> {
    pub reference: Field<'a>,
    pub list: Field<'a>,
    pub name: &'a str,
}

/// `(apiGroup, kind, name)` of an application reference.
type AppIdentity<'a> = (&'a str, &'a str, &'a str);

/// What the walk found.
#[derive(Debug, Default)]
pub struct Targets<'a> {
    pub apps: Vec<AppTarget<'a>>,
    pub groups: Vec<GroupTarget<'a>>,
}

/// apimachinery's `field.Invalid` body.
fn invalid(value: &str, detail: &str) -> String {
    format!("Invalid value: {value:?}: {detail}")
}

/// apimachinery's `field.Required` body.
fn required(detail: &str) -> String {
    format!("Required value: {detail}")
}

const RESERVED: &str = "must not name a reserved Cilium entity";

/// apimachinery's `IsQualifiedName` of the membership label key
/// `securitygroup.sdn.cozystack.io/<name>`, which cozystack-api checks for
/// the group's own name and for every `fromSG`/`toSG` peer. The prefix is
/// valid, so only the name part can fail; a `/` in it makes three parts.
fn check_membership_name(name: &str) -> Result<(), String> {
    if name.contains('/') {
        return Err(
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', \
             and must start and end with an alphanumeric character, with an optional DNS \
             subdomain prefix and '/'"
                .to_owned(),
        );
    }
    check_qualified_name(name)
}

/// A string, `""` when absent or null (Go's zero value).
fn text<'a>(field: &Field<'a>) -> Result<&'a str, FieldError> {
    Ok(field.string()?.unwrap_or_default())
}

/// Levenshtein distance of two short ASCII-case-folded strings (a kind is
/// at most 63 characters; this runs only on the rejection path).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous
                .get(j)
                .map_or(usize::MAX, |d| d + usize::from(ca != cb));
            let delete = previous.get(j + 1).map_or(usize::MAX, |d| d + 1);
            let insert = current.get(j).map_or(usize::MAX, |d| d + 1);
            current.push(substitute.min(delete).min(insert));
        }
        previous = current;
    }
    previous.last().copied().unwrap_or_default()
}

/// What to say about a kind that is not an application kind: a near miss
/// (case, plural, a typo or two) gets a suggestion.
fn unknown_kind(kind: &str) -> String {
    let suggestion = app_kind_by_plural(&kind.to_ascii_lowercase())
        .map(|app| app.kind)
        .or_else(|| {
            APP_KINDS
                .iter()
                .map(|app| (edit_distance(app.kind, kind), app.kind))
                .filter(|(distance, _)| *distance <= 2)
                .min_by_key(|(distance, _)| *distance)
                .map(|(_, known)| known)
        });
    let hint = match suggestion {
        Some(known) => format!("did you mean {known:?}? "),
        None => String::new(),
    };
    format!(
        "{kind:?} is not a Cozystack application kind, so the reference selects no pods; {hint}\
         kinds are case-sensitive, as `kubectl api-resources --api-group=apps.cozystack.io` \
         lists them (add a kind this cluster serves to the policy setting extraKinds)"
    )
}

/// The identity of an attachment: an empty `apiGroup` is
/// `apps.cozystack.io` (cozystack-api canonicalises it).
fn same_application(a: (&str, &str, &str), b: (&str, &str, &str)) -> bool {
    canonical_group(a.0) == canonical_group(b.0) && a.1 == b.1 && a.2 == b.2
}

fn canonical_group(group: &str) -> &str {
    if group.is_empty() { APPS_GROUP } else { group }
}

/// One walk over an object, recording findings.
pub struct Walk<'r, 'a> {
    review: &'r mut Review,
    settings: &'r Settings,
    pub targets: Targets<'a>,
}

impl<'r, 'a> Walk<'r, 'a> {
    pub fn new(review: &'r mut Review, settings: &'r Settings) -> Self {
        Self {
            review,
            settings,
            targets: Targets::default(),
        }
    }

    /// The group's own name (`metadata.name`): it becomes the membership
    /// label key, and the backing CiliumNetworkPolicy must be able to carry
    /// it.
    pub fn name(&mut self, field: &Field<'a>) -> Result<(), FieldError> {
        let name = text(field)?;
        if name.is_empty() {
            return Ok(());
        }
        if let Err(message) = check_membership_name(name) {
            self.review.violation(field.path(), invalid(name, &message));
        } else if !is_dns1123_subdomain(name) {
            self.review.violation(
                field.path(),
                format!(
                    "{name:?} is a valid membership label but not an object name: the backing \
                     CiliumNetworkPolicy needs a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.'), \
                     and its creation would fail after cozystack-api accepted the group"
                ),
            );
        }
        Ok(())
    }

    /// The spec: attachments, ingress and egress rules, the legacy shape.
    pub fn spec(&mut self, spec: &Field<'a>) -> Result<(), FieldError> {
        let [target_ref, attachments, ingress, egress] =
            spec.members(["targetRef", "attachments", "ingress", "egress"])?;
        self.legacy_target_ref(&target_ref);
        let attached: Vec<Field<'a>> = attachments.items()?.collect();
        let mut seen: Vec<(&Field<'a>, AppIdentity<'a>)> = Vec::new();
        for reference in &attached {
            let Some((group, kind, name)) = self.app_reference(reference)? else {
                continue;
            };
            let identity = (group, kind, name);
            if let Some((first, (first_group, ..))) = seen
                .iter()
                .find(|(_, (g, k, n))| same_application((g, k, n), identity))
            {
                let note = if *first_group == group {
                    ""
                } else {
                    "; an empty apiGroup means apps.cozystack.io"
                };
                self.review.violation(
                    reference.path(),
                    format!(
                        "duplicates {} ({kind} {name:?}{note}); remove one of them",
                        first.path()
                    ),
                );
                continue;
            }
            self.targets.apps.push(AppTarget {
                reference: reference.clone(),
                list: attachments.clone(),
                kind,
                name,
                attachment: true,
            });
            seen.push((reference, (group, kind, name)));
        }
        let mut rules = 0;
        for rule in ingress.items()? {
            let [apps, groups, cidrs, ports] =
                rule.members(["fromApp", "fromSG", "fromCIDR", "toPorts"])?;
            self.app_peers(&apps)?;
            self.group_peers(&groups)?;
            self.cidrs(&cidrs)?;
            self.ports(&ports)?;
            rules += 1;
        }
        for rule in egress.items()? {
            let [apps, groups, cidrs, ports, fqdns] =
                rule.members(["toApp", "toSG", "toCIDR", "toPorts", "toFQDNs"])?;
            self.app_peers(&apps)?;
            self.group_peers(&groups)?;
            self.cidrs(&cidrs)?;
            self.ports(&ports)?;
            self.fqdns(&fqdns)?;
            rules += 1;
        }
        if !attached.is_empty() && rules == 0 {
            self.review.warning(
                spec.path(),
                "no ingress or egress rules: members are labelled but not isolated \
                 (Cozystack 1.6 has no default deny)",
            );
        }
        Ok(())
    }

    /// `spec.targetRef`, the shape of the feature branch before release:
    /// cozystack-api drops the unknown field, so the group attaches to
    /// nothing.
    fn legacy_target_ref(&mut self, target: &Field<'a>) {
        if !target.is_present() {
            return;
        }
        // Shown as the user wrote it when it can be read; the finding is
        // about the field's presence, whatever it holds.
        let value = |key: &str, placeholder: &'static str| -> &'a str {
            target
                .field(key)
                .and_then(|f| f.string())
                .ok()
                .flatten()
                .filter(|v| !v.is_empty())
                .unwrap_or(placeholder)
        };
        let group = target
            .field("apiGroup")
            .and_then(|f| f.string())
            .ok()
            .flatten()
            .filter(|g| !g.is_empty())
            .map(|g| format!("apiGroup: {g}, "))
            .unwrap_or_default();
        self.review.violation(
            target.path(),
            format!(
                "targetRef is the pre-release shape and SecurityGroup v1alpha1 has no such field: \
                 cozystack-api drops it and the group attaches to nothing. Write \
                 spec.attachments: [{{{group}kind: {}, name: {}}}] instead",
                value("kind", "<Kind>"),
                value("name", "<name>"),
            ),
        );
    }

    /// An `ApplicationReference`: cozystack-api's `validateAppRef`, then
    /// what selects nothing. Returns `(apiGroup, kind, name)` when the
    /// reference passed everything.
    fn app_reference(
        &mut self,
        reference: &Field<'a>,
    ) -> Result<Option<AppIdentity<'a>>, FieldError> {
        let [group_field, kind_field, name_field] =
            reference.members(["apiGroup", "kind", "name"])?;
        let (group, kind, name) = (text(&group_field)?, text(&kind_field)?, text(&name_field)?);
        let mut passed = true;
        let mut violation = |field: &Field<'a>, message: String| {
            self.review.violation(field.path(), message);
            passed = false;
        };
        if kind.is_empty() {
            violation(&kind_field, required("must reference an application kind"));
        }
        if name.is_empty() {
            violation(&name_field, required("must reference an application name"));
        }
        let mut label_valid = [true; 3];
        for (valid, (field, value)) in label_valid.iter_mut().zip([
            (&group_field, &group),
            (&kind_field, &kind),
            (&name_field, &name),
        ]) {
            if let Err(message) = check_label_value(value) {
                violation(field, invalid(value, &message));
                *valid = false;
            }
        }
        if is_reserved_cilium_entity(name) {
            violation(&name_field, invalid(name, RESERVED));
        }
        let [group_valid, kind_valid, _] = label_valid;
        if group_valid && !group.is_empty() && group != APPS_GROUP {
            violation(
                &group_field,
                format!(
                    "{group:?} selects no pods: SecurityGroups attach only to applications of \
                     apps.cozystack.io; remove apiGroup or set it to apps.cozystack.io"
                ),
            );
        }
        if kind_valid && !kind.is_empty() && !self.settings.knows_kind(kind) {
            violation(&kind_field, unknown_kind(kind));
        }
        Ok(passed.then_some((group, kind, name)))
    }

    /// `fromApp` / `toApp`.
    fn app_peers(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for reference in list.items()? {
            if let Some((_, kind, name)) = self.app_reference(&reference)? {
                self.targets.apps.push(AppTarget {
                    reference: reference.clone(),
                    list: list.clone(),
                    kind,
                    name,
                    attachment: false,
                });
            }
        }
        Ok(())
    }

    /// `fromSG` / `toSG`: cozystack-api's `validateSGNames`, then names no
    /// SecurityGroup can have.
    fn group_peers(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for peer in list.items()? {
            let name = text(&peer)?;
            if name.is_empty() {
                self.review
                    .violation(peer.path(), required("must name a SecurityGroup"));
            } else if is_reserved_cilium_entity(name) {
                self.review.violation(peer.path(), invalid(name, RESERVED));
            } else if let Err(message) = check_membership_name(name) {
                self.review.violation(peer.path(), invalid(name, &message));
            } else if !is_dns1123_subdomain(name) {
                self.review.violation(
                    peer.path(),
                    format!(
                        "{name:?} cannot be the name of a SecurityGroup (names are lowercase \
                         RFC 1123 subdomains), so this peer matches no pods"
                    ),
                );
            } else {
                self.targets.groups.push(GroupTarget {
                    reference: peer.clone(),
                    list: list.clone(),
                    name,
                });
            }
        }
        Ok(())
    }

    /// `fromCIDR` / `toCIDR`: a prefix or a bare address, as Go's `netip`
    /// reads them.
    fn cidrs(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for cidr in list.items()? {
            let value = text(&cidr)?;
            if !is_cidr_or_ip(value) {
                self.review.violation(
                    cidr.path(),
                    invalid(value, "must be a valid CIDR or IP address"),
                );
            }
        }
        Ok(())
    }

    /// `toPorts[].ports[]`: port numbers or names, protocols.
    fn ports(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for rule in list.items()? {
            for port in rule.field("ports")?.items()? {
                let [port_field, protocol_field] = port.members(["port", "protocol"])?;
                let number = text(&port_field)?;
                for message in port_errors(number) {
                    self.review
                        .violation(port_field.path(), invalid(number, message));
                }
                let protocol = text(&protocol_field)?;
                if !protocol.is_empty() && !is_cilium_protocol(protocol) {
                    self.review.violation(
                        protocol_field.path(),
                        format!(
                            "Unsupported value: {protocol:?}: supported values: \"TCP\", \"UDP\", \"SCTP\", \"ANY\""
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// `toFQDNs`: each selector needs a name or a pattern.
    fn fqdns(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for selector in list.items()? {
            let [name, pattern] = selector.members(["matchName", "matchPattern"])?;
            let (name, pattern) = (text(&name)?, text(&pattern)?);
            if name.is_empty() && pattern.is_empty() {
                self.review.violation(
                    selector.path(),
                    required("must set matchName or matchPattern"),
                );
            }
        }
        Ok(())
    }
}

/// The references an object already had: applications as `(kind, name)`
/// and SecurityGroup names. Read leniently: the old object is the stored
/// one, and a part that cannot be read only means more gets checked.
#[derive(Debug, Default)]
pub struct Known<'a> {
    pub apps: Vec<(&'a str, &'a str)>,
    pub groups: Vec<&'a str>,
}

impl<'a> Known<'a> {
    pub fn read(object: &Field<'a>) -> Self {
        let list = |parent: &Field<'a>, key: &str| -> Vec<Field<'a>> {
            parent
                .field(key)
                .and_then(|f| Ok(f.items()?.collect()))
                .unwrap_or_default()
        };
        let string = |field: &Field<'a>| field.string().ok().flatten().unwrap_or_default();
        let member = |parent: &Field<'a>, key: &str| {
            parent.field(key).map(|f| string(&f)).unwrap_or_default()
        };
        let mut known = Known::default();
        let Ok(spec) = object.field("spec") else {
            return known;
        };
        let mut add_apps = |references: Vec<Field<'a>>| {
            for reference in references {
                known
                    .apps
                    .push((member(&reference, "kind"), member(&reference, "name")));
            }
        };
        add_apps(list(&spec, "attachments"));
        let ingress = list(&spec, "ingress");
        let egress = list(&spec, "egress");
        for rule in &ingress {
            add_apps(list(rule, "fromApp"));
        }
        for rule in &egress {
            add_apps(list(rule, "toApp"));
        }
        for (rules, key) in [(&ingress, "fromSG"), (&egress, "toSG")] {
            for rule in rules {
                known.groups.extend(list(rule, key).iter().map(&string));
            }
        }
        known
    }

    pub fn has_app(&self, kind: &str, name: &str) -> bool {
        self.apps.iter().any(|&(k, n)| k == kind && n == name)
    }

    pub fn has_group(&self, name: &str) -> bool {
        self.groups.contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> shared::Value {
        serde_json::from_str(text).unwrap()
    }

    fn walk(spec: &str, settings: &Settings) -> (Vec<String>, Vec<String>, usize, usize) {
        let mut review = Review::new();
        let spec = json(spec);
        let spec = Field::root(Some(&spec));
        let mut walk = Walk::new(&mut review, settings);
        walk.spec(&spec.field("spec").unwrap()).unwrap();
        let (apps, groups) = (walk.targets.apps.len(), walk.targets.groups.len());
        let verdict = review.verdict(shared::Refusal::Invalid);
        let violations = verdict
            .message()
            .map(|m| m.lines().map(str::to_owned).collect())
            .unwrap_or_default();
        (violations, verdict.warnings(), apps, groups)
    }

    #[test]
    fn cozystack_messages_with_their_paths() {
        let (violations, _, apps, groups) = walk(
            r#"{"spec": {"attachments": [{"name": "db"}, {"kind": "Postgres", "name": "World"}],
                "ingress": [{"fromSG": ["cluster", "", "a/b"], "fromCIDR": ["10.0.0.0/33", "10.0.0.1"],
                             "toPorts": [{"ports": [{"port": "0"}, {"port": "443", "protocol": "ICMP"}, {"port": "+80", "protocol": "tcp"}]}]}],
                "egress": [{"toFQDNs": [{}, {"matchName": "x.example.org"}]}]}}"#,
            &Settings::default(),
        );
        assert_eq!(
            violations,
            vec![
                "spec.attachments[0].kind: Required value: must reference an application kind",
                "spec.attachments[1].name: Invalid value: \"World\": must not name a reserved Cilium entity",
                "spec.ingress[0].fromSG[0]: Invalid value: \"cluster\": must not name a reserved Cilium entity",
                "spec.ingress[0].fromSG[1]: Required value: must name a SecurityGroup",
                "spec.ingress[0].fromSG[2]: Invalid value: \"a/b\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'",
                "spec.ingress[0].fromCIDR[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR or IP address",
                "spec.ingress[0].toPorts[0].ports[0].port: Invalid value: \"0\": port number must be between 1 and 65535",
                "spec.ingress[0].toPorts[0].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\", \"ANY\"",
                "spec.egress[0].toFQDNs[0]: Required value: must set matchName or matchPattern",
            ]
        );
        assert_eq!((apps, groups), (0, 0));
    }

    #[test]
    fn what_selects_nothing() {
        let (violations, _, apps, _) = walk(
            r#"{"spec": {"attachments": [
                {"apiGroup": "apps.example.io", "kind": "Postgres", "name": "a"},
                {"kind": "postgreses", "name": "b"},
                {"kind": "ComputePlane", "name": "c"},
                {"kind": "Postgres", "name": "d"},
                {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "d"}],
                "ingress": [{"fromSG": ["Frontend"]}]}}"#,
            &Settings::default(),
        );
        assert_eq!(violations.len(), 5, "{violations:#?}");
        assert!(
            violations[0]
                .starts_with("spec.attachments[0].apiGroup: \"apps.example.io\" selects no pods")
        );
        assert!(violations[1].contains("did you mean \"Postgres\"?"));
        assert!(violations[2].contains("extraKinds"));
        assert_eq!(
            violations[3],
            "spec.attachments[4]: duplicates spec.attachments[3] (Postgres \"d\"; an empty apiGroup means apps.cozystack.io); remove one of them"
        );
        assert!(
            violations[4].starts_with("spec.ingress[0].fromSG[0]: \"Frontend\" cannot be the name")
        );
        assert_eq!(apps, 1);
        let extra = Settings {
            extra_kinds: vec!["ComputePlane".into()],
            ..Settings::default()
        };
        let (violations, ..) = walk(
            r#"{"spec": {"attachments": [{"kind": "ComputePlane", "name": "c"}], "ingress": [{}]}}"#,
            &extra,
        );
        assert!(violations.is_empty());
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        assert_eq!(edit_distance("Postgress", "Postgres"), 1);
        assert_eq!(edit_distance("kubernetes", "Kubernetes"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        for (typo, known) in [
            ("Postgress", "Postgres"),
            ("postgres", "Postgres"),
            ("kuberneteses", "Kubernetes"),
            ("VMInstanse", "VMInstance"),
        ] {
            assert!(
                unknown_kind(typo).contains(&format!("did you mean {known:?}?")),
                "{typo}"
            );
        }
        assert!(!unknown_kind("Database").contains("did you mean"));
    }

    #[test]
    fn legacy_target_ref_shows_the_new_form() {
        let (violations, ..) = walk(
            r#"{"spec": {"targetRef": {"kind": "Postgres", "name": "db"}}}"#,
            &Settings::default(),
        );
        assert_eq!(violations.len(), 1);
        assert!(violations[0].starts_with("spec.targetRef: targetRef is the pre-release shape"));
        assert!(violations[0].ends_with("spec.attachments: [{kind: Postgres, name: db}] instead"));
        let (violations, ..) = walk(r#"{"spec": {"targetRef": 7}}"#, &Settings::default());
        assert!(violations[0].contains("[{kind: <Kind>, name: <name>}]"));
    }

    #[test]
    fn membership_only_groups_get_a_warning() {
        let (violations, warnings, ..) = walk(
            r#"{"spec": {"attachments": [{"kind": "Kubernetes", "name": "web"}]}}"#,
            &Settings::default(),
        );
        assert!(violations.is_empty());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("spec: no ingress or egress rules"));
        assert!(warnings[0].len() <= 120, "{}", warnings[0].len());
        let (_, warnings, ..) = walk(r#"{"spec": {}}"#, &Settings::default());
        assert!(warnings.is_empty());
    }

    #[test]
    fn malformed_parts_are_field_errors() {
        let mut review = Review::new();
        let settings = Settings::default();
        for (text, message) in [
            (
                r#"{"attachments": {}}"#,
                "spec.attachments must be a list, not an object",
            ),
            (
                r#"{"ingress": ["x"]}"#,
                "spec.ingress[0] must be an object, not a string",
            ),
            (
                r#"{"ingress": [{"toPorts": [{"ports": [{"port": 443}]}]}]}"#,
                "spec.ingress[0].toPorts[0].ports[0].port must be a string, not a number",
            ),
            (
                r#"{"egress": [{"toSG": [1]}]}"#,
                "spec.egress[0].toSG[0] must be a string, not a number",
            ),
        ] {
            let object = format!(r#"{{"spec": {text}}}"#);
            let object = json(&object);
            let object = Field::root(Some(&object));
            let mut walk = Walk::new(&mut review, &settings);
            let error = walk.spec(&object.field("spec").unwrap()).unwrap_err();
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    fn known_references_are_read_leniently() {
        let old = json(
            r#"{"spec": {"attachments": [{"kind": "Postgres", "name": "db"}, 7],
                "ingress": [{"fromApp": [{"kind": "Kubernetes", "name": "web"}], "fromSG": ["a", 3]}],
                "egress": "broken"}}"#,
        );
        let known = Known::read(&Field::root(Some(&old)));
        assert!(known.has_app("Postgres", "db"));
        assert!(known.has_app("Kubernetes", "web"));
        assert!(!known.has_app("Postgres", "web"));
        assert!(known.has_group("a"));
        assert!(!known.has_group("b"));
        assert!(!Known::read(&Field::root(Some(&json("\"x\"")))).has_group("a"));
    }

    #[test]
    fn names_of_the_group_itself() {
        for (name, expected) in [
            ("db", None),
            ("a.b-c", None),
            ("My_Group", Some("not an object name")),
            (
                "a".repeat(64).as_str(),
                Some("name part must be no more than 63 characters"),
            ),
        ] {
            let mut review = Review::new();
            let settings = Settings::default();
            let object = format!(r#"{{"metadata": {{"name": "{name}"}}}}"#);
            let object = json(&object);
            let object = Field::root(Some(&object));
            let name = object.at("metadata.name").unwrap();
            Walk::new(&mut review, &settings).name(&name).unwrap();
            let message = review.verdict(shared::Refusal::Invalid).message();
            match expected {
                None => assert_eq!(message, None),
                Some(fragment) => assert!(message.unwrap().contains(fragment)),
            }
        }
    }
}
