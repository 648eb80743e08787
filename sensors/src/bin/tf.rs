//! `flotilla-tf`: serves the ModelTfPublisher plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::model_tf::node::ModelTfServer::default())
}
