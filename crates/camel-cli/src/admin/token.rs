//! The admin API's bearer token: checked in constant time, never shown.

use std::sync::Arc;

use subtle::ConstantTimeEq;

/// Shorter tokens are refused: a guessable token is no protection.
const SHORTEST: usize = 16;

#[derive(Clone)]
pub(crate) struct Token(Arc<[u8]>);

impl Token {
    /// The token in `text`, surrounding whitespace (a file's final newline) removed.
    pub(crate) fn new(text: &str) -> Result<Token, &'static str> {
        let token = text.trim();
        if token.is_empty() {
            return Err("the token is empty");
        }
        if token.len() < SHORTEST {
            return Err("the token is shorter than 16 characters");
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the token holds a space or a character that is not printable ASCII");
        }
        Ok(Token(token.as_bytes().into()))
    }

    /// True when an `Authorization` header value is `Bearer` and this token. The bytes
    /// are compared in constant time, so the time of an answer tells nothing of how much
    /// of a guess was right (only whether its length was).
    pub(crate) fn admits(&self, authorization: &[u8]) -> bool {
        let Some((scheme, given)) = split_once(authorization, b' ') else {
            return false;
        };
        scheme.eq_ignore_ascii_case(b"bearer") && bool::from(self.0.ct_eq(trim(given)))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

fn split_once(bytes: &[u8], at: u8) -> Option<(&[u8], &[u8])> {
    let i = bytes.iter().position(|&b| b == at)?;
    Some((&bytes[..i], &bytes[i + 1..]))
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != b' ').unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| *b != b' ')
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bearer_scheme_with_the_exact_token_is_admitted() {
        let token = Token::new("0123456789abcdef\n").unwrap();
        assert!(token.admits(b"Bearer 0123456789abcdef"));
        assert!(token.admits(b"bearer  0123456789abcdef"));
        assert!(!token.admits(b"Bearer 0123456789abcdeF"));
        assert!(!token.admits(b"Bearer 0123456789abcde"));
        assert!(!token.admits(b"Basic 0123456789abcdef"));
        assert!(!token.admits(b"0123456789abcdef"));
        assert!(!token.admits(b""));
    }

    #[test]
    fn short_empty_or_spaced_tokens_are_refused() {
        assert!(Token::new("  \n").is_err());
        assert!(Token::new("short").is_err());
        assert!(Token::new("0123456789 abcdef").is_err());
        assert_eq!(
            format!("{:?}", Token::new("0123456789abcdef").unwrap()),
            "Token(***)"
        );
    }
}
