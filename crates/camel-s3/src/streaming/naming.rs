//! Object names of a streaming upload, made from `keyName` as Camel makes them.
//!
//! `keyName` splits into a stem and an extension at the last `.` of its last path
//! segment: `logs/app.txt` is `logs/app` + `.txt`. `progressive` names object 0
//! `keyName` itself and object *n* `stem-n` + extension; `random` names every object
//! `stem-<UUID>` + extension.

use crate::streaming::config::NamingStrategy;

/// `keyName` cut into what goes before and after an object's distinguishing part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyPattern {
    key_name: String,
    stem: String,
    extension: String,
}

impl KeyPattern {
    pub(crate) fn new(key_name: &str) -> Self {
        let segment_start = key_name.rfind('/').map_or(0, |i| i + 1);
        let (stem, extension) = match key_name[segment_start..].rfind('.') {
            // A leading dot (`.env`) names a file, it is no extension.
            Some(dot) if dot > 0 => key_name.split_at(segment_start + dot),
            _ => (key_name, ""),
        };
        KeyPattern {
            key_name: key_name.to_string(),
            stem: stem.to_string(),
            extension: extension.to_string(),
        }
    }

    /// The prefix every object of this pattern starts with (for listing them).
    pub(crate) fn stem(&self) -> &str {
        &self.stem
    }

    /// The name of object `number` (counted from 0 since the numbering started).
    pub(crate) fn name(&self, naming: NamingStrategy, number: u64) -> String {
        match naming {
            NamingStrategy::Progressive if number == 0 => self.key_name.clone(),
            NamingStrategy::Progressive => format!("{}-{number}{}", self.stem, self.extension),
            NamingStrategy::Random => format!("{}-{}{}", self.stem, random_uuid(), self.extension),
        }
    }

    /// The number `progressive` naming resumes at, given the keys already in the bucket
    /// under [`stem`](Self::stem): one after the highest of this pattern, 1 when only
    /// `keyName` itself is there, 0 when none is. Keys of other shapes that share the
    /// prefix (`app.txt.bak`, `app-old.txt`) are not this pattern's and do not count.
    pub(crate) fn resume_after<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> u64 {
        let mut next = 0;
        for key in keys {
            if key == self.key_name {
                next = next.max(1);
                continue;
            }
            let number = key
                .strip_prefix(self.stem.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .and_then(|rest| rest.strip_suffix(self.extension.as_str()))
                .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<u64>().ok());
            if let Some(n) = number {
                next = next.max(n.saturating_add(1));
            }
        }
        next
    }
}

/// A version 4 UUID in its usual text form.
fn random_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progressive_names_count_from_the_key_itself() {
        let p = KeyPattern::new("logs/app.txt");
        let names: Vec<String> = (0..3)
            .map(|n| p.name(NamingStrategy::Progressive, n))
            .collect();
        assert_eq!(names, ["logs/app.txt", "logs/app-1.txt", "logs/app-2.txt"]);
        let bare = KeyPattern::new("dir.d/out");
        assert_eq!(bare.name(NamingStrategy::Progressive, 4), "dir.d/out-4");
        assert_eq!(
            KeyPattern::new(".env").name(NamingStrategy::Progressive, 1),
            ".env-1"
        );
    }

    #[test]
    fn random_names_differ_and_keep_the_extension() {
        let p = KeyPattern::new("a/b.json");
        let (x, y) = (
            p.name(NamingStrategy::Random, 0),
            p.name(NamingStrategy::Random, 0),
        );
        assert_ne!(x, y);
        assert!(x.starts_with("a/b-") && x.ends_with(".json"), "{x}");
        assert_eq!(x.len(), "a/b-".len() + 36 + ".json".len(), "{x}");
    }

    #[test]
    fn numbering_resumes_after_the_highest_of_the_pattern() {
        let p = KeyPattern::new("camel.txt");
        assert_eq!(p.resume_after([]), 0);
        assert_eq!(p.resume_after(["camel.txt"]), 1);
        assert_eq!(
            p.resume_after([
                "camel.txt",
                "camel-10.txt",
                "camel-9.txt",
                "camel-x.txt",
                "camel.txt.bak"
            ]),
            11
        );
        assert_eq!(p.resume_after(["camelot.txt", "camel-.txt"]), 0);
    }
}
