//! `camel outbox counts | discard | retry-dead`: administer an outbox from the shell.

use std::process::ExitCode;

use camel_outbox::admin::{DeadSelection, OutboxAdmin};
use camel_outbox::{Datasource, OutboxConfig};

/// Options shared by every outbox subcommand.
#[derive(Debug, clap::Args)]
pub(crate) struct OutboxArgs {
    /// Database URL: postgres://… or sqlite://path (the embedded default is
    /// sqlite://camel-data/outbox.db).
    #[arg(long, global = true, default_value = "sqlite://camel-data/outbox.db")]
    db: String,
    /// The outbox name (as in `outbox:NAME`).
    #[arg(long, global = true, default_value = "default")]
    outbox: String,
    /// The outbox's table, when its endpoints set `table` (default camel_outbox_NAME).
    #[arg(long, global = true)]
    table: Option<String>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Pending, in backoff, dead, and the age of the oldest pending message.
    Counts,
    /// Remove one message (pending or dead) for good.
    Discard {
        /// The message id.
        #[arg(long, allow_hyphen_values = true)]
        id: i64,
    },
    /// Make dead messages pending again, keeping their ids.
    RetryDead {
        /// The ids to revive (repeatable).
        #[arg(long = "id", conflicts_with = "all", allow_hyphen_values = true)]
        ids: Vec<i64>,
        /// Revive every dead message.
        #[arg(long)]
        all: bool,
    },
}

pub(crate) async fn run(args: OutboxArgs) -> ExitCode {
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(args: OutboxArgs) -> Result<(), camel_outbox::OutboxError> {
    let datasource = Datasource::connect(&args.db)?;
    let mut config = OutboxConfig::new(&args.outbox);
    config.table = args.table;
    let admin = OutboxAdmin::from_config(datasource, &config)?;
    match args.action {
        Action::Counts => println!("{}", admin.counts().await?),
        Action::Discard { id } => {
            if admin.discard(id).await? {
                println!("discarded {id}");
            } else {
                println!("no message {id} in outbox `{}`", args.outbox);
            }
        }
        Action::RetryDead { ids, all } => {
            let selection = match (all, ids.is_empty()) {
                (true, _) => DeadSelection::All,
                (false, false) => DeadSelection::Ids(ids),
                (false, true) => {
                    return Err(camel_outbox::OutboxError::Config(
                        "say which dead messages to revive: --id ID (repeatable) or --all".into(),
                    ))
                }
            };
            let n = admin.retry_dead(selection).await?;
            println!("revived {n} dead message(s)");
        }
    }
    Ok(())
}
