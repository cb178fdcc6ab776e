//! `dictum doctor`'s Vulkan devices and plan on lavapipe, Mesa's CPU Vulkan driver
//! (`mesa-vulkan-drivers`, which scripts/test installs): the device is listed as CPU-type and
//! the plan keeps speech on the CPU, with the reason; without a loader, doctor says so and
//! still passes. The loader is told to use lavapipe alone (`VK_ICD_FILENAMES`), so a machine
//! with a real GPU gives the same answer.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn models_dir() -> PathBuf {
    let assets = match std::env::var_os("DICTUM_TEST_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    assets.join("models")
}

/// Lavapipe's ICD manifest; the test fails with what to install when it is missing.
fn lavapipe_icd() -> PathBuf {
    let dir = Path::new("/usr/share/vulkan/icd.d");
    std::fs::read_dir(dir)
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("lvp_icd") && n.ends_with(".json"))
                })
        })
        .unwrap_or_else(|| {
            panic!(
                "lavapipe is not installed (no lvp_icd*.json in {}): apt-get install mesa-vulkan-drivers libvulkan1 (scripts/test does)",
                dir.display()
            )
        })
}

fn doctor(envs: &[(&str, &str)], json: bool) -> (i32, String) {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dictum"));
    cmd.arg("doctor")
        .env("DICTUM_DATA_DIR", data.path())
        .env("DICTUM_CONFIG", data.path().join("config.toml"))
        .env("DICTUM_MODELS_DIR", models_dir())
        .env_remove("DICTUM_GPU_PLAN")
        .env_remove("DICTUM_VULKAN_LOADER");
    if json {
        cmd.arg("--json");
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run dictum doctor");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn on_lavapipe(extra: &[(&str, &str)]) -> (i32, Value) {
    let icd = lavapipe_icd();
    let icd = icd.to_str().expect("utf-8 path");
    let mut envs = vec![("VK_ICD_FILENAMES", icd), ("VK_DRIVER_FILES", icd)];
    envs.extend_from_slice(extra);
    let (code, out) = doctor(&envs, true);
    (code, serde_json::from_str(&out).expect("doctor json"))
}

#[test]
fn lavapipe_is_listed_as_a_cpu_device_and_the_plan_keeps_the_cpu() {
    let (code, v) = on_lavapipe(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["vulkan"]["status"], "devices", "{v:#}");
    let devices = v["vulkan"]["devices"].as_array().expect("devices");
    let lvp = devices
        .iter()
        .find(|d| d["name"].as_str().unwrap_or("").contains("llvmpipe"))
        .unwrap_or_else(|| panic!("no llvmpipe device: {v:#}"));
    assert_eq!(lvp["device_type"], "cpu", "{lvp:#}");
    assert!(
        lvp["device_local_bytes"].as_u64().unwrap_or(0) > 0,
        "{lvp:#}"
    );
    assert_eq!(v["vulkan_plan"]["device"], "cpu", "{v:#}");
    let reason = v["vulkan_plan"]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("CPU-type") && reason.contains("llvmpipe"),
        "{reason}"
    );
    // The human-readable form says the same.
    let icd = lavapipe_icd();
    let icd = icd.to_str().expect("utf-8 path");
    let (_, text) = doctor(
        &[("VK_ICD_FILENAMES", icd), ("VK_DRIVER_FILES", icd)],
        false,
    );
    assert!(
        text.lines()
            .any(|l| l.contains("vulkan") && l.contains("llvmpipe") && l.contains("CPU-type")),
        "{text}"
    );
}

#[test]
fn forcing_lavapipe_in_a_build_without_the_vulkan_backend_still_says_why_not() {
    let (code, v) = on_lavapipe(&[("DICTUM_GPU_PLAN", "force")]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["vulkan_plan"]["device"], "cpu", "{v:#}");
    let reason = v["vulkan_plan"]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("no Vulkan backend"), "{reason}");
}

#[test]
fn without_a_loader_doctor_says_so_and_passes() {
    let (code, out) = doctor(
        &[("DICTUM_VULKAN_LOADER", "/nonexistent/libvulkan.so.1")],
        true,
    );
    let v: Value = serde_json::from_str(&out).expect("doctor json");
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["vulkan"]["status"], "no_vulkan", "{v:#}");
    let reason = v["vulkan"]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("no Vulkan loader") && reason.contains("libvulkan1"),
        "{reason}"
    );
    assert_eq!(v["vulkan_plan"]["device"], "cpu");
}
