//! `flotilla._native`: what the Python package takes from the Rust crates
//! so that it has no second implementation of them: the CDR codecs of every
//! ROS message and service Flotilla speaks (`flotilla-messages`), the keys,
//! the world's state, description and control messages and the lockstep
//! report (`flotilla-wire`), and the ROS-facing surface of a world
//! (`flotilla-plugins`). Transport is Python's (eclipse-zenoh); nothing
//! here opens a connection.
//!
//! Messages cross as plain Python values (dicts, lists, numbers, strings),
//! field names as in the `.msg` files; the ranges and intensities of a
//! `LaserScan` come as NumPy `float32` arrays that own the decoded buffer,
//! without a copy.

use flotilla_messages::by_name::{visit_message, visit_service, MessageVisitor, ServiceVisitor};
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::services::Service;
use flotilla_messages::{RosMessage, RosService};
use flotilla_wire::control::{ControlReply, ControlRequest};
use flotilla_wire::description::WorldDescription;
use flotilla_wire::world_to_nodes::WorldState;
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pythonize::{depythonize, pythonize};

/// A message that could not be encoded or decoded: names the type and what
/// was wrong.
fn bad(type_name: &str, what: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{type_name}: {what}"))
}

fn unknown_type(type_name: &str) -> PyErr {
    PyKeyError::new_err(format!(
        "no message type {type_name:?}; Flotilla speaks: {}",
        flotilla_messages::by_name::message_types().join(", ")
    ))
}

/// Every message type the package can encode and decode, `package/msg/Type`.
#[pyfunction]
fn message_types() -> Vec<&'static str> {
    flotilla_messages::by_name::message_types()
}

/// The message of a CDR payload, as a dict.
#[pyfunction]
fn decode<'py>(py: Python<'py>, type_name: &str, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    if type_name == LaserScan::TYPE_NAME {
        return decode_scan(py, payload);
    }
    struct Decode<'a, 'py> {
        py: Python<'py>,
        payload: &'a [u8],
    }
    impl<'py> MessageVisitor for Decode<'_, 'py> {
        type Output = PyResult<Bound<'py, PyAny>>;
        fn visit<T: RosMessage + Default>(self) -> Self::Output {
            let message = flotilla_messages::decode::<T>(self.payload).map_err(|e| bad(T::TYPE_NAME, e))?;
            Ok(pythonize(self.py, &message)?)
        }
    }
    visit_message(type_name, Decode { py, payload }).ok_or_else(|| unknown_type(type_name))?
}

/// A scan with its ranges and intensities as NumPy arrays that take over
/// the decoded vectors.
fn decode_scan<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let mut scan = flotilla_messages::decode::<LaserScan>(payload).map_err(|e| bad(LaserScan::TYPE_NAME, e))?;
    let ranges = std::mem::take(&mut scan.ranges);
    let intensities = std::mem::take(&mut scan.intensities);
    let dict = pythonize(py, &scan)?;
    dict.set_item("ranges", ranges.into_pyarray(py))?;
    dict.set_item("intensities", intensities.into_pyarray(py))?;
    Ok(dict)
}

/// The CDR payload of `message` (a dict; fields left out keep their
/// defaults, a field the type does not have is an error).
#[pyfunction]
fn encode<'py>(py: Python<'py>, type_name: &str, message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    struct Encode<'a, 'py> {
        message: &'a Bound<'py, PyAny>,
    }
    impl MessageVisitor for Encode<'_, '_> {
        type Output = PyResult<Vec<u8>>;
        fn visit<T: RosMessage + Default>(self) -> Self::Output {
            Ok(flotilla_messages::encode(&complete::<T>(self.message, T::TYPE_NAME)?))
        }
    }
    let bytes = visit_message(type_name, Encode { message }).ok_or_else(|| unknown_type(type_name))??;
    Ok(PyBytes::new(py, &bytes))
}

/// `T` from `given`: its fields laid over `T::default()`, so a user writes
/// only what matters (`{"linear": {"x": 0.5}}`).
fn complete<T: serde::Serialize + serde::de::DeserializeOwned + Default>(
    given: &Bound<'_, PyAny>,
    type_name: &str,
) -> PyResult<T> {
    let py = given.py();
    let base = pythonize(py, &T::default())?;
    let merged = overlay(&base, given, type_name)?;
    depythonize::<T>(&merged).map_err(|e| bad(type_name, e))
}

/// `given` laid over `base`, field by field into nested dicts; `path` names
/// where, for errors.
fn overlay<'py>(base: &Bound<'py, PyAny>, given: &Bound<'py, PyAny>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    // NumPy arrays and other sequences with `tolist` become lists first.
    let given = if given.hasattr("tolist")? && !given.is_instance_of::<PyDict>() {
        given.call_method0("tolist")?
    } else {
        given.clone()
    };
    let (Ok(base), Ok(fields)) = (base.cast::<PyDict>(), given.cast::<PyDict>()) else {
        if base.is_instance_of::<PyDict>() && !given.is_none() {
            return Err(bad(path, format!("expected a dict of fields, got {}", given.get_type().name()?)));
        }
        return Ok(given);
    };
    let out = base.copy()?;
    for (name, value) in fields.iter() {
        let name: String = name.extract().map_err(|_| bad(path, "field names are strings"))?;
        let Some(default) = base.get_item(&name)? else {
            let known: Vec<String> = base.keys().iter().map(|k| k.to_string()).collect();
            return Err(bad(path, format!("no field {name:?} (it has {})", known.join(", "))));
        };
        out.set_item(&name, overlay(&default, &value, &format!("{path}.{name}"))?)?;
    }
    Ok(out.into_any())
}

/// Every service the world serves: `(ROS name, type)`, e.g.
/// `("/reset_simulation", "simulation_interfaces/srv/ResetSimulation")`.
#[pyfunction]
fn services() -> Vec<(&'static str, &'static str)> {
    Service::ALL.iter().map(|s| (s.ros_name(), s.type_name())).collect()
}

fn service_named(name: &str) -> PyResult<Service> {
    let wanted = format!("/{}", name.trim_start_matches('/'));
    Service::ALL.into_iter().find(|s| s.ros_name() == wanted).ok_or_else(|| {
        let names: Vec<&str> = Service::ALL.iter().map(|s| s.ros_name()).collect();
        PyKeyError::new_err(format!("no service {name:?}; the world serves: {}", names.join(", ")))
    })
}

/// The CDR request of the service `name` (e.g. `reset_simulation`).
#[pyfunction]
fn encode_request<'py>(py: Python<'py>, name: &str, request: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    struct Request<'a, 'py> {
        request: &'a Bound<'py, PyAny>,
    }
    impl ServiceVisitor for Request<'_, '_> {
        type Output = PyResult<Vec<u8>>;
        fn visit<S: RosService>(self) -> Self::Output
        where
            S::Request: Default,
            S::Response: Default,
        {
            let request = complete::<S::Request>(self.request, S::TYPE_NAME)?;
            Ok(flotilla_messages::encode(&request))
        }
    }
    let bytes = visit_service(service_named(name)?, Request { request })?;
    Ok(PyBytes::new(py, &bytes))
}

/// The response of the service `name`, as a dict.
#[pyfunction]
fn decode_response<'py>(py: Python<'py>, name: &str, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    struct Response<'a, 'py> {
        py: Python<'py>,
        payload: &'a [u8],
    }
    impl<'py> ServiceVisitor for Response<'_, 'py> {
        type Output = PyResult<Bound<'py, PyAny>>;
        fn visit<S: RosService>(self) -> Self::Output
        where
            S::Request: Default,
            S::Response: Default,
        {
            let response = flotilla_messages::decode::<S::Response>(self.payload).map_err(|e| bad(S::TYPE_NAME, e))?;
            Ok(pythonize(self.py, &response)?)
        }
    }
    visit_service(service_named(name)?, Response { py, payload })
}

fn wire_error(e: flotilla_wire::DecodeError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The world's description (models, their bodies and plugins, layers, maps,
/// places), as a dict.
#[pyfunction]
fn decode_description<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let description: WorldDescription = flotilla_wire::decode(payload).map_err(wire_error)?;
    Ok(pythonize(py, &description)?)
}

/// Every topic a world publishes to ROS (its Zenoh key, ROS type): the
/// bridge's surface of the description in `payload`.
#[pyfunction]
fn topics(payload: &[u8], sim: &str, ros_prefix: &str) -> PyResult<Vec<(String, &'static str)>> {
    let description: WorldDescription = flotilla_wire::decode(payload).map_err(wire_error)?;
    let keys = flotilla_wire::Keys::new(sim).with_ros_prefix(ros_prefix);
    let surface = flotilla_plugins::surface::surface(&description, &keys, &[]);
    Ok(surface.topics.into_iter().map(|t| (t.key, t.ros_type)).collect())
}

/// Every topic of every model, as `(model, key, ROS type, direction)` with
/// direction `"publish"` (the model's outputs) or `"subscribe"` (its
/// inputs, e.g. a drive's `cmd_vel`).
#[pyfunction]
fn model_topics(
    payload: &[u8],
    sim: &str,
    ros_prefix: &str,
) -> PyResult<Vec<(String, String, &'static str, &'static str)>> {
    use flotilla_plugins::registry::Direction;
    let description: WorldDescription = flotilla_wire::decode(payload).map_err(wire_error)?;
    let keys = flotilla_wire::Keys::new(sim).with_ros_prefix(ros_prefix);
    let mut out = Vec::new();
    for model in &description.models {
        let specs = flotilla_plugins::registry::topics_of_model(model, &description.layer_names)
            .into_iter()
            .chain(flotilla_plugins::maps::topics_of_model(model));
        for spec in specs {
            let direction = match spec.direction {
                Direction::Publish => "publish",
                Direction::Subscribe => "subscribe",
            };
            out.push((model.name.clone(), keys.ros(&spec.name), spec.ros_type, direction));
        }
    }
    Ok(out)
}

/// A `Laser` plugin's parameters, as Flotilla's laser reads them: `topic`
/// (its key), `frame` (resolved), `body`, `body_id`, `update_rate_hz`,
/// `origin` (x m, y m, θ rad on the body), `range_m`, `noise_std_dev_m`,
/// `upside_down`, `layers` (bits), `angle_min_rad`, `angle_max_rad`,
/// `angle_increment_rad`, `beams` and `instance` (the claim's instance id).
/// `ValueError` names the model and plugin when there is no such laser.
#[pyfunction]
fn laser_config<'py>(
    py: Python<'py>,
    payload: &[u8],
    sim: &str,
    ros_prefix: &str,
    model: &str,
    plugin: &str,
) -> PyResult<Bound<'py, PyDict>> {
    use flotilla_plugins::laser::LaserConfig;
    use flotilla_plugins::PluginConfig;
    use flotilla_wire::names::{resolve_frame, resolve_topic};
    let description: WorldDescription = flotilla_wire::decode(payload).map_err(wire_error)?;
    let m = description.models.iter().find(|m| m.name == model).ok_or_else(|| {
        let names: Vec<&str> = description.models.iter().map(|m| m.name.as_str()).collect();
        PyValueError::new_err(format!("no model {model:?}; the world has: {}", names.join(", ")))
    })?;
    let p = m
        .plugins
        .iter()
        .find(|p| p.name == plugin && p.plugin_type == LaserConfig::TYPE)
        .ok_or_else(|| PyValueError::new_err(format!("model {model:?} has no Laser plugin named {plugin:?}")))?;
    let ctx = flotilla_plugins::PluginContext::of(m, &description.layer_names);
    let config = flotilla_plugins::entry_of(p, ctx.model_file)
        .and_then(|entry| LaserConfig::parse(&entry, &p.name, &ctx))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let body =
        m.body(&config.body).ok_or_else(|| PyValueError::new_err(format!("{model}: no body {}", config.body)))?;
    let keys = flotilla_wire::Keys::new(sim).with_ros_prefix(ros_prefix);
    let out = PyDict::new(py);
    out.set_item("topic", keys.ros(&resolve_topic(&m.namespace, &config.topic)))?;
    out.set_item("frame", resolve_frame(&m.namespace, &config.frame))?;
    out.set_item("body", &config.body)?;
    out.set_item("body_id", body.id)?;
    out.set_item("update_rate_hz", config.update_rate_hz)?;
    out.set_item("origin", (config.origin.x_m, config.origin.y_m, config.origin.theta_rad))?;
    out.set_item("range_m", config.range_m)?;
    out.set_item("noise_std_dev_m", config.noise_std_dev_m)?;
    out.set_item("upside_down", config.upside_down)?;
    out.set_item("layers", config.layers)?;
    out.set_item("angle_min_rad", config.angle_min_rad)?;
    out.set_item("angle_max_rad", config.angle_max_rad)?;
    out.set_item("angle_increment_rad", config.angle_increment_rad)?;
    out.set_item("beams", config.beam_count())?;
    out.set_item("instance", flotilla_wire::claim_book::instance_id(model, plugin, LaserConfig::ROLE.aspect))?;
    Ok(out)
}

/// A world state: `revision`, `step`, `time_ns`, `step_ns`, and its bodies
/// as NumPy arrays: `ids` (uint32), `poses` (N × 3: x m, y m, θ rad) and
/// `twists` (N × 3: vx m/s, vy m/s, ω rad/s), in body-id order.
#[pyfunction]
fn decode_world_state<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let state: WorldState = flotilla_wire::decode(payload).map_err(wire_error)?;
    let out = PyDict::new(py);
    out.set_item("revision", state.revision)?;
    out.set_item("step", state.step)?;
    out.set_item("time_ns", state.time.nanos)?;
    out.set_item("step_ns", state.step_ns)?;
    let ids: Vec<u32> = state.bodies.iter().map(|b| b.id).collect();
    let poses: Vec<Vec<f64>> = state.bodies.iter().map(|b| vec![b.pose.x_m, b.pose.y_m, b.pose.theta_rad]).collect();
    let twists: Vec<Vec<f64>> =
        state.bodies.iter().map(|b| vec![b.twist.vx_mps, b.twist.vy_mps, b.twist.omega_radps]).collect();
    out.set_item("ids", ids.into_pyarray(py))?;
    let rows = |rows: Vec<Vec<f64>>| -> PyResult<Bound<'py, PyArray2<f64>>> {
        if rows.is_empty() {
            return Ok(PyArray2::zeros(py, [0, 3], false));
        }
        PyArray2::from_vec2(py, &rows).map_err(|e| PyValueError::new_err(e.to_string()))
    };
    out.set_item("poses", rows(poses)?)?;
    out.set_item("twists", rows(twists)?)?;
    Ok(out)
}

/// A lockstep report: "done with `step`" (`commands_nothing`: nothing this
/// participant publishes is any plugin's input).
#[pyfunction]
#[pyo3(signature = (step, commands_nothing = false))]
fn encode_step_done<'py>(py: Python<'py>, step: u64, commands_nothing: bool) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &flotilla_wire::lockstep::encode_step_done(step, commands_nothing))
}

/// A control request (`{"Move": {"name": "r1", "pose": {...}}}`, `"Pause"`,
/// `{"Step": {"steps": 10}}`, ...): its verb and its bytes.
#[pyfunction]
fn encode_control<'py>(py: Python<'py>, request: &Bound<'py, PyAny>) -> PyResult<(&'static str, Bound<'py, PyBytes>)> {
    let request: ControlRequest =
        depythonize(request).map_err(|e| PyValueError::new_err(format!("not a control request: {e}")))?;
    Ok((request.verb(), PyBytes::new(py, &flotilla_wire::encode(&request))))
}

/// A control reply: `success`, `message`, `revision`.
#[pyfunction]
fn decode_control_reply<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let reply: ControlReply = flotilla_wire::decode(payload).map_err(wire_error)?;
    Ok(pythonize(py, &reply)?)
}

/// The Zenoh keys of one simulation (`flotilla/<sim>/...` and its
/// ROS-facing names).
#[pyclass(frozen)]
struct Keys(flotilla_wire::Keys);

#[pymethods]
impl Keys {
    #[new]
    #[pyo3(signature = (sim, ros_prefix = ""))]
    fn new(sim: &str, ros_prefix: &str) -> PyResult<Keys> {
        flotilla_wire::keys::check_key_chunk("sim", sim).map_err(PyValueError::new_err)?;
        Ok(Keys(flotilla_wire::Keys::new(sim).with_ros_prefix(ros_prefix)))
    }
    fn world_description(&self) -> String {
        self.0.world_description()
    }
    fn world_state(&self) -> String {
        self.0.world_state()
    }
    fn world_events(&self) -> String {
        self.0.world_events()
    }
    fn world_tokens(&self) -> String {
        self.0.world_tokens()
    }
    fn control(&self, verb: &str) -> String {
        self.0.control(verb)
    }
    fn lockstep(&self, node: &str) -> String {
        self.0.lockstep(node)
    }
    fn node_token(&self, node: &str) -> String {
        self.0.node_token(node)
    }
    fn claim_token(&self, instance: &str, node: &str) -> String {
        self.0.claim_token(instance, node)
    }
    fn claim_tokens(&self) -> String {
        self.0.claim_tokens()
    }
    /// The key of a ROS name (topic or service), with the world's prefix.
    fn ros(&self, name: &str) -> String {
        self.0.ros(name)
    }
}

/// The wire schema version this build speaks.
#[pyfunction]
fn schema_version() -> u16 {
    flotilla_wire::SCHEMA_VERSION
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(message_types, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(services, m)?)?;
    m.add_function(wrap_pyfunction!(encode_request, m)?)?;
    m.add_function(wrap_pyfunction!(decode_response, m)?)?;
    m.add_function(wrap_pyfunction!(decode_description, m)?)?;
    m.add_function(wrap_pyfunction!(topics, m)?)?;
    m.add_function(wrap_pyfunction!(model_topics, m)?)?;
    m.add_function(wrap_pyfunction!(laser_config, m)?)?;
    m.add_function(wrap_pyfunction!(decode_world_state, m)?)?;
    m.add_function(wrap_pyfunction!(encode_step_done, m)?)?;
    m.add_function(wrap_pyfunction!(encode_control, m)?)?;
    m.add_function(wrap_pyfunction!(decode_control_reply, m)?)?;
    m.add_function(wrap_pyfunction!(schema_version, m)?)?;
    m.add_class::<Keys>()?;
    Ok(())
}
