//! The go-templates of the capture block: each writes of an object exactly
//! the fields a snapshot keeps of its kind
//! ([`capabilities::snapshot::Reads::fields`]), every credential among them
//! only as whether it is set, as one YAML document in flow style.
//!
//! kubectl runs a go-template over the object as `encoding/json` decodes it
//! (`k8s.io/cli-runtime/pkg/printers/template.go`): maps, lists, strings,
//! `float64` numbers, booleans and `nil`, told apart here by `printf "%T"`.
//! Strings are written with `printf "%q"`, whose escapes (`\n`, `\t`,
//! `\xNN`, `\uNNNN`) YAML's double-quoted style reads the same; integral
//! numbers without an exponent. Text/template has no function to test a
//! key's name against a list but `eq` with several arguments, so the
//! credential keys ([`CREDENTIAL_KEYS`]) and the dropped annotations are
//! spelled into the templates.
//!
//! The templates every kind shares are one shell variable of the block
//! ([`LIBRARY`], `$lib`); each kind adds one template per level of its
//! fields.

use capabilities::snapshot::REDACTED;
use capabilities::snapshot::reads::{CREDENTIAL_KEYS, DROPPED_ANNOTATIONS, FREE_FORM_KEYS, Fields};

/// `eq $k "a" "b"`: whether `$k` is one of `keys`.
fn one_of(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
    format!("eq $k {}", quoted.join(" "))
}

/// The templates every kind uses (no `and`, which evaluates every
/// argument before Go 1.18): `v` writes a value whole (credentials
/// as whether they are set, no dropped annotation), `c` a credential, `s`
/// a free-form subtree (every string as whether it is set), `n` a number,
/// `x` a scalar.
pub fn library() -> String {
    let map = "map[string]interface {}";
    let list = "[]interface {}";
    format!(
        concat!(
            r#"{{{{define "n"}}}}{{{{if eq (printf "%.6f" .) (printf "%.0f.000000" .)}}}}{{{{printf "%.0f" .}}}}{{{{else}}}}{{{{printf "%v" .}}}}{{{{end}}}}{{{{end}}}}"#,
            r#"{{{{define "x"}}}}{{{{$t := printf "%T" .}}}}{{{{if eq $t "string"}}}}{{{{printf "%q" .}}}}{{{{else if eq $t "float64"}}}}{{{{template "n" .}}}}{{{{else if eq $t "<nil>"}}}}null{{{{else}}}}{{{{.}}}}{{{{end}}}}{{{{end}}}}"#,
            r#"{{{{define "c"}}}}{{{{if eq (printf "%T" .) "string"}}}}{{{{if eq . ""}}}}""{{{{else}}}}"{redacted}"{{{{end}}}}{{{{else}}}}{{{{template "v" .}}}}{{{{end}}}}{{{{end}}}}"#,
            r#"{{{{define "s"}}}}{{{{$t := printf "%T" .}}}}{{{{if eq $t "{map}"}}}}{{ {{{{- $c := false}}}}{{{{range $k, $e := .}}}}{{{{if $c}}}}, {{{{end}}}}{{{{$c = true}}}}{{{{printf "%q" $k}}}}: {{{{template "s" $e}}}}{{{{end}}}}}}{{{{else if eq $t "{list}"}}}}[{{{{range $i, $e := .}}}}{{{{if $i}}}}, {{{{end}}}}{{{{template "s" $e}}}}{{{{end}}}}]{{{{else}}}}{{{{template "c" .}}}}{{{{end}}}}{{{{end}}}}"#,
            r#"{{{{define "v"}}}}{{{{$t := printf "%T" .}}}}{{{{if eq $t "{map}"}}}}{{ {{{{- $c := false}}}}{{{{range $k, $e := .}}}}{{{{if not ({dropped})}}}}{{{{if $c}}}}, {{{{end}}}}{{{{$c = true}}}}{{{{printf "%q" $k}}}}: {{{{if {credential}}}}}{{{{template "c" $e}}}}{{{{else if {free}}}}}{{{{template "s" $e}}}}{{{{else}}}}{{{{template "v" $e}}}}{{{{end}}}}{{{{end}}}}{{{{end}}}}}}{{{{else if eq $t "{list}"}}}}[{{{{range $i, $e := .}}}}{{{{if $i}}}}, {{{{end}}}}{{{{template "v" $e}}}}{{{{end}}}}]{{{{else}}}}{{{{template "x" .}}}}{{{{end}}}}{{{{end}}}}"#,
        ),
        map = map,
        list = list,
        redacted = REDACTED,
        dropped = one_of(DROPPED_ANNOTATIONS),
        credential = one_of(CREDENTIAL_KEYS),
        free = one_of(FREE_FORM_KEYS),
    )
}

/// The name of the template that writes a member `key` kept whole.
fn whole(key: &str) -> &'static str {
    if CREDENTIAL_KEYS.contains(&key) {
        "c"
    } else if FREE_FORM_KEYS.contains(&key) {
        "s"
    } else {
        "v"
    }
}

/// Writes the templates of `fields` below the root into `defines`, the
/// template of this level named `name`.
fn level(name: &str, fields: &Fields, defines: &mut Vec<String>) {
    let Some(members) = fields.members() else {
        return;
    };
    let mut branches = String::new();
    for (i, (key, below)) in members.iter().enumerate() {
        let written = match below {
            Fields::Whole => whole(key).to_owned(),
            Fields::Members(_) => {
                let child = format!("{name}.{i}");
                level(&child, below, defines);
                child
            }
        };
        let keyword = if i == 0 { "if" } else { "else if" };
        branches.push_str(&format!(
            r#"{{{{{keyword} eq $k {key:?}}}}}{{{{template "{written}" $e}}}}"#
        ));
    }
    let keys: Vec<&str> = members.keys().map(String::as_str).collect();
    defines.push(format!(
        concat!(
            r#"{{{{define "{name}"}}}}{{{{$t := printf "%T" .}}}}{{{{if eq $t "map[string]interface {{}}"}}}}"#,
            r#"{{ {{{{- $c := false}}}}{{{{range $k, $e := .}}}}{{{{if {kept}}}}}{{{{if $c}}}}, {{{{end}}}}{{{{$c = true}}}}"#,
            r#"{{{{printf "%q" $k}}}}: {branches}{{{{end}}}}{{{{end}}}}{{{{end}}}}}}"#,
            r#"{{{{else if eq $t "[]interface {{}}"}}}}[{{{{range $i, $e := .}}}}{{{{if $i}}}}, {{{{end}}}}{{{{template "{name}" $e}}}}{{{{end}}}}]"#,
            r#"{{{{else}}}}null{{{{end}}}}{{{{end}}}}"#,
        ),
        name = name,
        kept = one_of(&keys),
        branches = branches,
    ));
}

/// The template of one kind (after [`library`]): each object, or every
/// item of a list, as a document of its `apiVersion`, `kind` and `fields`.
pub fn object_template(api_version: &str, kind: &str, fields: &Fields, list: bool) -> String {
    let mut defines = Vec::new();
    let mut root = String::new();
    if let Some(members) = fields.members() {
        for (i, (key, below)) in members
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind"))
            .enumerate()
        {
            let written = match below {
                Fields::Whole => whole(key).to_owned(),
                Fields::Members(_) => {
                    let child = format!("o.{i}");
                    level(&child, below, &mut defines);
                    child
                }
            };
            root.push_str(&format!(
                r#"{{{{if eq $k {key:?}}}}}, {key:?}: {{{{template "{written}" $e}}}}{{{{end}}}}"#
            ));
        }
    }
    let document = format!(
        r#"---{{{{"\n"}}}}{{"apiVersion": {api_version:?}, "kind": {kind:?}{{{{range $k, $e := .}}}}{root}{{{{end}}}}}}{{{{"\n"}}}}"#
    );
    let body = if list {
        format!("{{{{range .items}}}}{document}{{{{end}}}}")
    } else {
        document
    };
    format!("{}{body}", defines.concat())
}
