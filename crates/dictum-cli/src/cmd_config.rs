use crate::context::load_config;
use dictum_engine::config::{Config, DEFAULT_TOML};
use dictum_engine::paths;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Print the default config, every key documented.
    #[arg(long)]
    print_default: bool,
    /// Print the path of the config file in use.
    #[arg(long)]
    path: bool,
    /// Check the config file and print the effective settings as TOML.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.print_default {
        print!("{DEFAULT_TOML}");
        return Ok(ExitCode::SUCCESS);
    }
    if args.path {
        println!("{}", paths::config_file()?.display());
        return Ok(ExitCode::SUCCESS);
    }
    let config: Config = load_config()?;
    if args.check {
        print!("{}", toml_string(&config)?);
    } else {
        println!("config file: {}", paths::config_file()?.display());
        println!("data dir:    {}", paths::data_dir()?.display());
        println!("(use --print-default for every key, --check for the effective settings)");
    }
    Ok(ExitCode::SUCCESS)
}

fn toml_string(config: &Config) -> anyhow::Result<String> {
    Ok(dictum_engine::config::to_toml(config)?)
}
