//! The Vulkan probe: which Vulkan devices this machine has (name, type, memory and budget), for
//! `dictum doctor` and the Vulkan plan (`vulkan_planner.rs`). The Vulkan loader
//! (`libvulkan.so.1`) is opened at run time with `ash`'s `loaded` feature, so Dictum neither
//! links it nor needs it: without it the probe says so and everything runs on the CPU.
//! `DICTUM_VULKAN_LOADER` names another loader file (a loader outside the library path).

use ash::vk;
use serde::Serialize;
use std::ffi::CStr;

const MIB: u64 = 1024 * 1024;

/// A Vulkan device's kind, as the driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceType {
    Discrete,
    Integrated,
    Virtual,
    /// A software rasterizer on the CPU (lavapipe/llvmpipe, SwiftShader): never faster than
    /// whisper's own CPU code.
    Cpu,
    Other,
}

impl DeviceType {
    pub fn describe(self) -> &'static str {
        match self {
            DeviceType::Discrete => "discrete GPU",
            DeviceType::Integrated => "integrated GPU",
            DeviceType::Virtual => "virtual GPU",
            DeviceType::Cpu => "CPU-type (software)",
            DeviceType::Other => "other",
        }
    }
}

/// One Vulkan device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VulkanDevice {
    pub index: u32,
    pub name: String,
    pub device_type: DeviceType,
    /// `major.minor.patch` of the Vulkan API the device supports.
    pub api_version: String,
    /// Sum of the device-local memory heaps (system memory for integrated and CPU devices).
    pub device_local_bytes: u64,
    /// What the driver says this process may still use of those heaps (`VK_EXT_memory_budget`:
    /// budget minus usage), when the driver has the extension.
    pub budget_bytes: Option<u64>,
}

impl VulkanDevice {
    pub fn describe(&self) -> String {
        let budget = match self.budget_bytes {
            Some(b) => format!("budget {} MiB (VK_EXT_memory_budget)", b / MIB),
            None => "no memory budget extension".into(),
        };
        format!(
            "{}: {}, Vulkan {}, {} MiB device-local, {budget}",
            self.name,
            self.device_type.describe(),
            self.api_version,
            self.device_local_bytes / MIB
        )
    }
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum VulkanStatus {
    /// No loader, no driver, or no device; the reason says which and what to install.
    NoVulkan {
        reason: String,
    },
    Devices {
        devices: Vec<VulkanDevice>,
    },
}

fn device_type(t: vk::PhysicalDeviceType) -> DeviceType {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::Discrete,
        vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::Integrated,
        vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::Virtual,
        vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
        _ => DeviceType::Other,
    }
}

fn version(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

/// Lists the Vulkan devices. Never panics; a missing loader or driver is `NoVulkan`.
pub fn probe() -> VulkanStatus {
    let custom = std::env::var_os("DICTUM_VULKAN_LOADER").filter(|v| !v.is_empty());
    // SAFETY: loading the Vulkan loader runs its initialisers; it is the system's loader (or the
    // one the user named), the same library every Vulkan program loads.
    let entry = match &custom {
        Some(path) => unsafe { ash::Entry::load_from(path) },
        None => unsafe { ash::Entry::load() },
    };
    let entry = match entry {
        Ok(e) => e,
        Err(e) => {
            let which = custom.as_ref().map_or_else(
                || "libvulkan.so.1".to_string(),
                |p| p.to_string_lossy().into_owned(),
            );
            return VulkanStatus::NoVulkan {
                reason: format!(
                    "no Vulkan loader ({which}: {e}); install libvulkan1 (Debian/Ubuntu) or vulkan-loader (Fedora) and your GPU's Vulkan driver (mesa-vulkan-drivers for AMD and Intel)"
                ),
            };
        }
    };
    // SAFETY: plain queries on a valid entry; the instance is destroyed before returning.
    unsafe { list(&entry) }
}

unsafe fn list(entry: &ash::Entry) -> VulkanStatus {
    let api = match entry.try_enumerate_instance_version() {
        Ok(Some(v)) => v,
        _ => vk::API_VERSION_1_0,
    };
    let app = vk::ApplicationInfo::default()
        .application_name(c"dictum")
        .api_version(api.clamp(vk::API_VERSION_1_0, vk::API_VERSION_1_1));
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    let instance = match entry.create_instance(&info, None) {
        Ok(i) => i,
        Err(vk::Result::ERROR_INCOMPATIBLE_DRIVER) => {
            return VulkanStatus::NoVulkan {
                reason: "the Vulkan loader found no driver; install your GPU's Vulkan driver (mesa-vulkan-drivers for AMD and Intel, the NVIDIA driver's Vulkan part)".into(),
            }
        }
        Err(e) => {
            return VulkanStatus::NoVulkan {
                reason: format!("Vulkan did not start ({e}); `vulkaninfo --summary` shows why"),
            }
        }
    };
    let out = match instance.enumerate_physical_devices() {
        Ok(pds) if pds.is_empty() => VulkanStatus::NoVulkan {
            reason: "the Vulkan driver lists no device".into(),
        },
        Ok(pds) => VulkanStatus::Devices {
            devices: pds
                .iter()
                .enumerate()
                .map(|(i, &pd)| describe(&instance, pd, i as u32, api))
                .collect(),
        },
        Err(e) => VulkanStatus::NoVulkan {
            reason: format!("Vulkan could not list its devices ({e})"),
        },
    };
    instance.destroy_instance(None);
    out
}

unsafe fn describe(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    index: u32,
    instance_api: u32,
) -> VulkanDevice {
    let props = instance.get_physical_device_properties(pd);
    let name = props
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("Vulkan device {index}"));
    let mem = instance.get_physical_device_memory_properties(pd);
    let heaps = mem.memory_heaps_as_slice();
    let local: Vec<usize> = (0..heaps.len())
        .filter(|&i| heaps[i].flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .collect();
    let device_local_bytes = local.iter().map(|&i| heaps[i].size).sum();
    let has_budget = instance
        .enumerate_device_extension_properties(pd)
        .unwrap_or_default()
        .iter()
        .any(|e| e.extension_name_as_c_str().ok() == Some(c"VK_EXT_memory_budget" as &CStr));
    let budget_bytes = (has_budget
        && instance_api >= vk::API_VERSION_1_1
        && props.api_version >= vk::API_VERSION_1_1)
        .then(|| {
            let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
            let mut props2 = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budget);
            instance.get_physical_device_memory_properties2(pd, &mut props2);
            local
                .iter()
                .map(|&i| budget.heap_budget[i].saturating_sub(budget.heap_usage[i]))
                .sum()
        });
    VulkanDevice {
        index,
        name,
        device_type: device_type(props.device_type),
        api_version: version(props.api_version),
        device_local_bytes,
        budget_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_versions_read_as_the_driver_says() {
        assert_eq!(device_type(vk::PhysicalDeviceType::CPU), DeviceType::Cpu);
        assert_eq!(
            device_type(vk::PhysicalDeviceType::DISCRETE_GPU),
            DeviceType::Discrete
        );
        assert_eq!(version(vk::make_api_version(0, 1, 3, 230)), "1.3.230");
    }

    #[test]
    fn the_real_probe_on_this_machine_does_not_fail() {
        // With or without a loader and driver: an answer, never a panic.
        match probe() {
            VulkanStatus::NoVulkan { reason } => assert!(!reason.is_empty()),
            VulkanStatus::Devices { devices } => assert!(!devices.is_empty()),
        }
    }
}
