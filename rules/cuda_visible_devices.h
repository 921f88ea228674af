#pragma once
// GPU032: a container with GPUs that hard-codes CUDA_VISIBLE_DEVICES. The device plugin hands a
// container exactly the GPUs allocated to it (NVIDIA_VISIBLE_DEVICES, read by NVIDIA's container
// runtime), and CUDA numbers the devices it sees from 0 (CUDA C++ Programming Guide, "CUDA
// Environment Variables": CUDA_VISIBLE_DEVICES indexes the devices visible to the process). A
// hard-coded list is at best redundant; an index at or past the container's GPU count names no
// device (CUDA: "no CUDA-capable device is detected"); a shorter list leaves allocated GPUs idle;
// a UUID names one node's GPU. A warning by default.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_cuda_visible_devices_rule();

}  // namespace gpuadmit
