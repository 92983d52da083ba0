//! The `--set` override engine: `key=value` assignments written into a scenario's TOML tree
//! before it is read, so that every override is checked exactly as if the file said it.
//!
//! A key is dotted (`path.forward.rate`); a number selects one element of an array
//! (`flow.0.cc`), a name applies to every element (`flow.cc`). Missing tables on the way are
//! created and recorded, so that loading can blame the override (not the file) when such a
//! table turns out wrong.

/// Writes one `key=value` override into the tree; records in `created` the paths of the
/// tables it had to create (`flow[1].transport`), as error paths write them.
pub(crate) fn apply_override(
    root: &mut toml::Table,
    assignment: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    let (key, value) = assignment
        .split_once('=')
        .ok_or("expected key=value, e.g. path.forward.rate=20Mbit")?;
    let key = key.trim();
    let segments: Vec<&str> = key.split('.').map(str::trim).collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(format!("key {key:?} has an empty part"));
    }
    set_in_table(root, &segments, &override_value(value.trim()), "", created)
}

/// The override value as TOML if it is one, else as a string (also a `--cc-param` value).
pub(crate) fn override_value(text: &str) -> toml::Value {
    let parsed = format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"));
    match parsed {
        // "inf", "nan" and dates are TOML too, but never meant as such here.
        Some(toml::Value::Float(_))
            if text
                .trim_start_matches(['+', '-'])
                .starts_with(|c: char| c.is_ascii_alphabetic()) =>
        {
            toml::Value::String(text.to_owned())
        }
        Some(toml::Value::Datetime(_)) | None => toml::Value::String(text.to_owned()),
        Some(value) => value,
    }
}

fn join(at: &str, segment: &str) -> String {
    if at.is_empty() {
        segment.to_owned()
    } else {
        format!("{at}.{segment}")
    }
}

fn set_in_table(
    table: &mut toml::Table,
    segments: &[&str],
    value: &toml::Value,
    at: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    let Some((first, rest)) = segments.split_first() else {
        return Ok(());
    };
    if rest.is_empty() {
        table.insert((*first).to_owned(), value.clone());
        return Ok(());
    }
    let path = join(at, first);
    if !table.contains_key(*first) {
        created.push(path.clone());
    }
    let child = table
        .entry(*first)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in_value(child, rest, value, &path, created)
}

fn set_in_value(
    target: &mut toml::Value,
    segments: &[&str],
    value: &toml::Value,
    at: &str,
    created: &mut Vec<String>,
) -> Result<(), String> {
    match target {
        toml::Value::Table(table) => set_in_table(table, segments, value, at, created),
        toml::Value::Array(items) => {
            let Some((first, rest)) = segments.split_first() else {
                return Ok(());
            };
            // A segment that looks like a number is an index, never a key for every element.
            let numeric = first.strip_prefix(['-', '+']).unwrap_or(first);
            let looks_numeric = !numeric.is_empty() && numeric.bytes().all(|b| b.is_ascii_digit());
            let index = first.parse::<usize>().ok();
            if looks_numeric && index.is_none() {
                return Err(format!(
                    "`{first}` is not a valid index into `{at}`: indices are whole numbers \
                     from 0, and `{at}` has {} element(s)",
                    items.len()
                ));
            }
            if let Some(index) = index {
                let len = items.len();
                let item = items.get_mut(index).ok_or_else(|| {
                    format!("`{at}` has {len} element(s); index {index} is out of range (indices start at 0)")
                })?;
                if rest.is_empty() {
                    *item = value.clone();
                    Ok(())
                } else {
                    set_in_value(item, rest, value, &format!("{at}[{index}]"), created)
                }
            } else if items.is_empty() {
                Err(format!("`{at}` has no entries to apply `{first}` to"))
            } else {
                items.iter_mut().enumerate().try_for_each(|(i, item)| {
                    set_in_value(item, segments, value, &format!("{at}[{i}]"), created)
                })
            }
        }
        other => Err(format!("`{at}` is a {}, not a table", other.type_str())),
    }
}
