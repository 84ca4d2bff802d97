//! The capture script `snapshot-command` prints: one `kubectl get` per kind
//! the bundle's policies read (their `contextAwareResources`) and the
//! checklist judges, and per object they read by name, into
//! `snapshot.yaml`, with the record of how each read ended.
//!
//! A read that fails leaves no objects, as an empty list does; the record
//! ([`capabilities::snapshot::Capture`]) is what tells them apart, so the
//! script never silences kubectl: it sorts each failure by kubectl's own
//! error line (not the klog lines before it) into forbidden, unavailable
//! (503: an aggregated API that does not answer, even when kubectl then
//! says the kind does not exist), refused, timeout, not installed or
//! failed ([`CLASSIFY`]), keeps that line, names the object in its summary,
//! and exits 1 when a read failed.
//!
//! Each kind is read at the version the rules read (`<plural>.<version>.<group>`;
//! the group alone gets the version the API server prefers), and through a
//! go-template that keeps exactly what a snapshot keeps of it
//! ([`template`](super::template), [`Reads::fields`]): no `spec.values` of a
//! HelmRelease the rules do not read, no file content, no environment, and
//! every credential only as whether it is set. Secrets keep only the data
//! keys the policies compare, and for each credential they check, whether
//! it is non-empty ([`capabilities::snapshot::CAPTURED_KEYS`]).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use capabilities::snapshot::{
    CAPTURE_API_VERSION, CAPTURE_KIND, CAPTURED_KEYS, REDACTED, Reads, versioned_resource,
};
use host::PolicyModule;

use super::template;
use super::wiring::{self, Where};
use crate::checklist::checks::{CHECKS, Judged};

/// One `kubectl get` of the script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Get {
    resource: String,
    api_version: String,
    kind: String,
    /// `(namespace, name)` for a read of one object.
    only: Option<(String, String)>,
    /// What the go-template keeps of the objects.
    template: Template,
}

/// The go-template of a read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Template {
    /// The fields of the kind, after the shared templates (`$lib`).
    Fields(String),
    /// One whole in itself: a Secret's, and the wiring capture's own.
    Own(String),
    /// None: the objects as the API server serves them (the wiring
    /// capture's Kubewarden objects).
    Whole,
}

/// Kinds the script never captures whole, whatever `contextAwareResources`
/// grants: a snapshot has no business copying a cluster's configuration
/// and credentials, nor every Deployment of it. The objects of them the
/// policies read are captured by name (the Secrets of their metadata, the
/// ConfigMaps and Deployments the checklist names, the Deployment that
/// records the cluster's release); a read of any other fails against the
/// snapshot, so a rule that makes one says it did not check.
const BY_NAME_ONLY: &[(&str, &str)] = &[
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
];

/// The one Deployment a policy reads: the one that records the cluster's
/// release ([`release::recorded`]).
const OPERATOR: (&str, &str) = ("apps/v1", "Deployment");

/// A Secret as the snapshot keeps it: its name, the `values` keys as they
/// are, each non-empty `credentials` key as [`REDACTED`], and the list of
/// keys it examined.
fn secret_template(values: &BTreeSet<String>, credentials: &BTreeSet<String>) -> String {
    let nl = "{{\"\\n\"}}";
    let examined: Vec<&str> = values
        .iter()
        .chain(credentials)
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut data = String::new();
    for key in values {
        data.push_str(&format!(
            "{{{{with index . \"{key}\"}}}}{nl}  {key}: {{{{.}}}}{{{{end}}}}"
        ));
    }
    for key in credentials {
        data.push_str(&format!(
            "{{{{if index . \"{key}\"}}}}{nl}  {key}: {REDACTED}{{{{end}}}}"
        ));
    }
    format!(
        "apiVersion: v1{nl}kind: Secret{nl}metadata:{nl}  name: {{{{.metadata.name}}}}{nl}  \
         namespace: {{{{.metadata.namespace}}}}{nl}  annotations:{nl}    {CAPTURED_KEYS}: \"{}\"{nl}\
         data:{{{{with .data}}}}{data}{{{{end}}}}{nl}",
        examined.join(" ")
    )
}

/// Every read the script makes, in order: whole kinds, then objects by name.
fn gets(modules: &[PolicyModule]) -> Result<Vec<Get>> {
    let metadata: Vec<_> = modules.iter().filter_map(PolicyModule::metadata).collect();
    let reads = Reads::of(metadata.iter().copied()).map_err(anyhow::Error::msg)?;
    let mut kinds: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut reads_release = false;
    let mut add_kind = |api_version: &str, kind: &str| {
        kinds
            .entry(versioned_resource(api_version, kind))
            .or_insert_with(|| (api_version.to_owned(), kind.to_owned()));
    };
    for metadata in &metadata {
        for read in &metadata.context_aware_resources {
            let read = (read.api_version.as_str(), read.kind.as_str());
            if !BY_NAME_ONLY.contains(&read) {
                add_kind(read.0, read.1);
            }
            reads_release |= read == OPERATOR;
        }
    }
    let mut named: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    if reads_release {
        named.insert((
            OPERATOR.0.to_owned(),
            OPERATOR.1.to_owned(),
            release::OPERATOR_NAMESPACE.to_owned(),
            release::OPERATOR.to_owned(),
        ));
    }
    for check in CHECKS {
        if let Judged::Rules { targets, .. } = check.judged {
            for target in targets {
                match target.only {
                    None => add_kind(target.api_version, target.kind),
                    Some((namespace, name)) => {
                        named.insert((
                            target.api_version.to_owned(),
                            target.kind.to_owned(),
                            namespace.to_owned(),
                            name.to_owned(),
                        ));
                    }
                }
            }
        }
    }
    let fields = |api_version: &str, kind: &str, list: bool| {
        Template::Fields(template::object_template(
            api_version,
            kind,
            &reads.fields(api_version, kind),
            list,
        ))
    };
    let mut gets: Vec<Get> = kinds
        .into_iter()
        .map(|(resource, (api_version, kind))| Get {
            template: fields(&api_version, &kind, true),
            resource,
            api_version,
            kind,
            only: None,
        })
        .collect();
    let listed: BTreeSet<String> = gets.iter().map(|g| g.resource.clone()).collect();
    for (api_version, kind, namespace, name) in named {
        let resource = versioned_resource(&api_version, &kind);
        if !listed.contains(&resource) {
            gets.push(Get {
                template: fields(&api_version, &kind, false),
                resource,
                api_version,
                kind,
                only: Some((namespace, name)),
            });
        }
    }
    for read in reads.secrets() {
        let values: BTreeSet<String> = read.values.iter().cloned().collect();
        let credentials: BTreeSet<String> = read.credentials.iter().cloned().collect();
        gets.push(Get {
            resource: "secrets".to_owned(),
            api_version: "v1".to_owned(),
            kind: "Secret".to_owned(),
            template: Template::Own(secret_template(&values, &credentials)),
            only: Some((read.namespace.clone(), read.name.clone())),
        });
    }
    Ok(gets)
}

/// A word for the shell, in single quotes.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A word for the shell, quoted only where it needs to be.
fn word(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"./-".contains(&b))
    {
        text.to_owned()
    } else {
        quoted(text)
    }
}

/// How a failed read ended, from kubectl's words: its own error line (the
/// first line that is not klog's, `E1205 08:00:00.000000 12 file.go:265]`,
/// nor a server warning). A kind kubectl says does not exist is
/// unavailable, not absent, when the APIService serving its group version
/// is not Available (`available`, which asks it), or when discovery of its
/// group failed with a 503 first (the klog line "couldn't get resource list
/// for <group>/<version>: the server is currently unable to handle the
/// request" of recent kubectl; older ones log it only at `-v=3`).
const CLASSIFY: &str = r#"kubectl_error() { # kubectl's own error line, not a klog line before it
  grep -v -E '^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [^ ]+:[0-9]+\] |^Warning: ' "$tmp/error" | head -n 1
}
available() { # API_VERSION: yes, no, or nothing when no APIService serves it
  case $1 in */*) ;; *) return ;; esac
  local found
  found=$(kubectl --request-timeout=60s get apiservices.v1.apiregistration.k8s.io "${1#*/}.${1%/*}" --ignore-not-found \
    -o 'go-template=found{{range .status.conditions}}{{if eq .type "Available"}}{{.status}}{{end}}{{end}}' 2>/dev/null) || return
  case $found in foundTrue) echo yes ;; found*) echo no ;; esac
}
classify() { # API_VERSION: how the failed read ended
  case $(kubectl_error) in
    *"(Forbidden)"*|*" is forbidden: "*) echo forbidden ;;
    *"(ServiceUnavailable)"*|*"unable to handle the request"*) echo unavailable ;;
    *" was refused"*|*"connection refused"*) echo refused ;;
    *"doesn't have a resource type"*|*"could not find the requested resource"*|*"no matches for kind"*)
      if grep -F "couldn't get resource list for $1: " "$tmp/error" | grep -q -e "unable to handle the request" -e ServiceUnavailable \
        || [ "$(available "$1")" = no ]; then
        echo unavailable
      else
        echo not-installed
      fi ;;
    *"(Timeout)"*|*[Tt]imeout*|*"deadline exceeded"*|*"time allotted"*) echo timeout ;;
    *) echo failed ;;
  esac
}"#;

/// The capture function the script calls once per read.
const CAPTURE: &str = r#"capture() { # API_VERSION KIND RESOURCE [NAMESPACE NAME [GO-TEMPLATE]]
  local api=$1 kind=$2 resource=$3 namespace=${4:-} name=${5:-} template=${6:-} result
  local args=(get "$resource")
  if [ -n "$name" ]; then
    if [ -n "$namespace" ]; then args+=(--namespace "$namespace"); fi
    args+=("$name" --ignore-not-found)
  else
    args+=(--all-namespaces)
  fi
  if [ -n "$template" ]; then args+=(-o "go-template=$template"); else args+=(-o yaml); fi
  if kubectl --request-timeout=60s "${args[@]}" >"$tmp/objects" 2>"$tmp/error"; then
    result=captured
    { echo ---; cat "$tmp/objects"; echo; } >>"$out"
  else
    result=$(classify "$api")
    if [ "$result" != not-installed ]; then
      failed=$((failed + 1))
      echo "kubectl get $resource${namespace:+ --namespace $namespace}${name:+ $name}: $result: $(kubectl_error)" >&2
    fi
  fi
  {
    echo "- apiVersion: $api"
    echo "  kind: $kind"
    echo "  resource: $resource"
    if [ -n "$name" ]; then
      if [ -n "$namespace" ]; then echo "  namespace: $namespace"; fi
      echo "  name: $name"
    fi
    echo "  result: $result"
    if [ "$result" != captured ]; then
      printf "  message: '%s'\n" "$(kubectl_error | sed "s/'/''/g")"
    fi
  } >>"$tmp/reads"
}"#;

/// The reads of the wiring capture that the policies' reads do not make
/// already ([`wiring::gets`]).
fn wiring_gets(place: &Where, gets: &[Get]) -> Vec<Get> {
    let whole: BTreeSet<&str> = gets
        .iter()
        .filter(|g| g.only.is_none())
        .map(|g| g.resource.as_str())
        .collect();
    wiring::gets(place)
        .into_iter()
        .map(|w| Get {
            resource: w.resource.to_owned(),
            api_version: w.api_version.to_owned(),
            kind: w.kind.to_owned(),
            only: w.only,
            template: w.template.map_or(Template::Whole, Template::Own),
        })
        .filter(|w| !whole.contains(w.resource.as_str()) && !gets.contains(w))
        .collect()
}

/// The shell block: `bash` reads the script from the here-document, so it
/// runs the same from any shell, and its exit status is the script's.
pub fn snapshot_command(modules: &[PolicyModule], place: &Where) -> Result<String> {
    let then = if place.wiring {
        "Then: cozystack-policies wiring snapshot.yaml"
    } else {
        "Then: cozystack-policies preflight snapshot.yaml"
    };
    let mut out = format!(
        "# What the bundle's policies read and the 1.6 upgrade checklist judges, from the management\n\
         # cluster, into snapshot.yaml, with how each read ended: of each object only the fields the\n\
         # rules read, credentials only as whether they are set.\n\
         # Exits 1 when a read failed. {then}\n\
         bash -s <<'CAPTURE'\n\
         set -u\n\
         out=snapshot.yaml failed=0\n\
         tmp=$(mktemp -d) || exit 2\n\
         trap 'rm -rf \"$tmp\"' EXIT\n\
         : >\"$out\" && : >\"$tmp/reads\" || exit 2\n",
    );
    out.push_str(CLASSIFY);
    out.push('\n');
    out.push_str(CAPTURE);
    out.push('\n');
    out.push_str(&format!("lib={}
", quoted(&template::library())));
    let mut gets = gets(modules)?;
    if place.wiring {
        let more = wiring_gets(place, &gets);
        gets.extend(more);
    }
    for get in gets {
        let mut words = vec![
            word(&get.api_version),
            word(&get.kind),
            word(&get.resource),
        ];
        let (namespace, name) = get.only.unwrap_or_default();
        words.extend([word(&namespace), word(&name)]);
        words.push(match get.template {
            Template::Fields(body) => format!("\"$lib\"{}", quoted(&body)),
            Template::Own(body) => quoted(&body),
            Template::Whole => quoted(""),
        });
        out.push_str(&format!("capture {}\n", words.join(" ")));
    }
    if place.wiring {
        out.push_str(&wiring::script(modules, place, quoted));
    }
    out.push_str(&format!(
        "{{\n  echo ---\n  echo 'apiVersion: {CAPTURE_API_VERSION}'\n  echo 'kind: {CAPTURE_KIND}'\n  \
         echo 'metadata: {{name: snapshot}}'\n  \
         printf \"context: '%s'\\n\" \"$(kubectl config current-context 2>/dev/null | sed \"s/'/''/g\")\"\n  \
         echo \"capturedAt: '$(date -u +%Y-%m-%dT%H:%M:%SZ)'\"\n  echo 'reads:'\n  cat \"$tmp/reads\"\n\
         }} >>\"$out\"\n"
    ));
    out.push_str(
        "if [ \"$failed\" -gt 0 ]; then\n  \
         echo \"$failed read(s) failed: the preflight reports the checks that need them as NOT CHECKED\" >&2\n  \
         exit 1\nfi\nCAPTURE\n",
    );
    Ok(out)
}
