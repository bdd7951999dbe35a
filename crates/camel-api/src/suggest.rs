//! Small text helpers for error messages: "did you mean …?" and wildcards.

/// The candidate closest to `input` by edit distance, if it is close enough to be a
/// plausible typo (distance at most a third of the longer word, and at least 1 allowed).
pub fn nearest<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let input_lower = input.to_ascii_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let d = distance(&input_lower, &candidate.to_ascii_lowercase());
        let limit = (input.len().max(candidate.len()) / 3).max(2);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Converts a camelCase or kebab-case name to snake_case (`fileName` → `file_name`).
pub fn to_snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

/// Converts a snake_case name to camelCase (`file_name` → `fileName`), as Camel spells
/// its option and step names.
pub fn to_camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// How a file spells its keys, so that messages echo names (and suggest others) in the
/// file's own spelling: Camel's camelCase, or the snake_case of camel-rs's docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `setHeader`, `showBody`.
    Camel,
    /// `set_header`, `show_body`.
    Snake,
}

impl Spelling {
    /// The spelling `name` shows: snake_case when it holds `_`, camelCase when it holds an
    /// upper-case letter; `None` for one lower-case word, which reads the same in both.
    pub fn of(name: &str) -> Option<Spelling> {
        if name.contains('_') {
            Some(Spelling::Snake)
        } else if name.chars().any(|c| c.is_ascii_uppercase()) {
            Some(Spelling::Camel)
        } else {
            None
        }
    }

    /// The spelling most of `names` show (camelCase, Camel's, when none tells).
    pub fn among<'a>(names: impl IntoIterator<Item = &'a str>) -> Spelling {
        let (mut camel, mut snake) = (0usize, 0usize);
        for name in names {
            match Spelling::of(name) {
                Some(Spelling::Camel) => camel += 1,
                Some(Spelling::Snake) => snake += 1,
                None => {}
            }
        }
        if snake > camel {
            Spelling::Snake
        } else {
            Spelling::Camel
        }
    }

    /// A snake_case name in this spelling.
    pub fn spell(self, snake: &str) -> String {
        match self {
            Spelling::Camel => to_camel_case(snake),
            Spelling::Snake => snake.to_string(),
        }
    }
}

/// Matches `text` against `pattern`, where `*` matches any run of characters and `?` one.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let keys = ["set_header", "set_body", "filter"];
        assert_eq!(nearest("set_heder", keys), Some("set_header"));
        assert_eq!(nearest("zzzzzzzz", keys), None);
    }

    #[test]
    fn snake_cases_camel_names() {
        assert_eq!(to_snake_case("fileName"), "file_name");
        assert_eq!(to_snake_case("setHeader"), "set_header");
        assert_eq!(to_snake_case("already_snake"), "already_snake");
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("Camel*", "CamelFileName"));
        assert!(wildcard_match("*.txt", "a.txt"));
        assert!(!wildcard_match("*.txt", "a.csv"));
    }
}
