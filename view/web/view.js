// Flotilla's live view: draws the scene (JSON, once per world revision) and
// the frames (binary: poses and sensor readings, see view/src/frame.rs) that
// the server sends over one WebSocket, and sends the user's commands back.
"use strict";

(() => {
  const canvas = document.getElementById("world");
  const ctx = canvas.getContext("2d");
  const $ = (id) => document.getElementById(id);

  // --- what the server told us ------------------------------------------
  let scene = null;            // the scene message
  const bodies = new Map();    // body id -> {model, color, footprints, pose}
  const models = new Map();    // model name -> {name, robot, pose, bodies}
  const poses = new Map();     // body id -> [x, y, θ] from the latest frame
  const trails = new Map();    // model name -> [[x, y], ...]
  let scans = new Map();       // laser index -> Float32Array of ranges
  let sonar = new Map();       // "ring/transducer" -> range
  let charges = new Map();     // model name -> battery charge, fraction
  let status = null;
  let simTime = 0;
  let lastTrailTime = -1;

  // --- the view: metres to pixels ----------------------------------------
  let scale = 40;              // px per m
  let origin = [0, 0];         // world point at the canvas's bottom-left, m
  let fitted = false;
  const toScreen = (x, y) => [(x - origin[0]) * scale, canvas.height - (y - origin[1]) * scale];
  const toWorld = (px, py) => [px / scale + origin[0], (canvas.height - py) / scale + origin[1]];

  // --- interaction state ---------------------------------------------------
  let selected = null;         // model name
  let drag = null;             // {kind: "move"|"turn"|"pan", ...}
  let spawned = 0;
  let lastReply = null;

  // --- frames per second, measured where they are drawn -----------------
  let drawn = 0;
  let fps = 0;
  setInterval(() => { fps = drawn; drawn = 0; }, 1000);

  const rgba = (c, alpha) =>
    `rgba(${Math.round(c[0] * 255)},${Math.round(c[1] * 255)},${Math.round(c[2] * 255)},${alpha ?? c[3]})`;
  // Flatland's colours are for rviz's dark background: a light one (its
  // default white) is drawn dark on this light page.
  const visible = (c) => (0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2] > 0.8 ? [0.2, 0.22, 0.25, c[3]] : c);

  function resize() {
    canvas.width = canvas.clientWidth;
    canvas.height = canvas.clientHeight;
  }
  window.addEventListener("resize", resize);
  resize();

  // --- the socket ------------------------------------------------------------
  const socket = new WebSocket(`ws://${location.host}/ws`);
  socket.binaryType = "arraybuffer";
  socket.onmessage = (event) => {
    if (typeof event.data === "string") {
      const message = JSON.parse(event.data);
      if (message.type === "scene") takeScene(message);
      else if (message.type === "status") status = message;
      else if (message.type === "reply") takeReply(message);
    } else {
      takeFrame(new DataView(event.data));
    }
  };
  socket.onclose = () => { $("status").textContent = "disconnected from the view server"; };
  const send = (command) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(command));

  function takeScene(message) {
    scene = message;
    bodies.clear();
    for (const b of message.bodies) bodies.set(b.id, b);
    models.clear();
    for (const m of message.models) models.set(m.name, m);
    for (const name of [...trails.keys()]) if (!models.has(name)) trails.delete(name);
    for (const id of [...poses.keys()]) if (!bodies.has(id)) poses.delete(id);
    if (selected && !models.has(selected)) select(null);
    const choice = $("spawn");
    const chosen = choice.value;
    choice.length = 1;
    for (const file of message.spawnable) choice.add(new Option(file, file));
    choice.value = message.spawnable.includes(chosen) ? chosen : "";
    if (!fitted) {
      fit();
      fitted = true;
      // Sensor readings by default for a world of few sensors.
      const sensors = message.lasers.length + message.sonars.length;
      $("readings").checked = sensors > 0 && sensors <= 100;
      $("names").checked = message.models.length <= 200;
      send({op: "readings", on: $("readings").checked});
    }
  }

  function fit() {
    let lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
    const take = (x, y) => { lo = [Math.min(lo[0], x), Math.min(lo[1], y)]; hi = [Math.max(hi[0], x), Math.max(hi[1], y)]; };
    for (const layer of scene.layers) for (let i = 0; i < layer.segments.length; i += 2) take(layer.segments[i], layer.segments[i + 1]);
    // Bodies over 1 km from the walls' box are offstage (a crowd's people
    // waiting to come on): they are left out of the fit.
    const walls = [lo, hi], far = 1000;
    const onStage = (x, y) => !isFinite(walls[0][0]) ||
      (x > walls[0][0] - far && x < walls[1][0] + far && y > walls[0][1] - far && y < walls[1][1] + far);
    for (const b of scene.bodies) if (onStage(b.pose[0], b.pose[1])) take(b.pose[0], b.pose[1]);
    if (!isFinite(lo[0])) { lo = [-5, -5]; hi = [5, 5]; }
    const margin = 0.5;
    const w = hi[0] - lo[0] + 2 * margin, h = hi[1] - lo[1] + 2 * margin;
    scale = Math.min(canvas.width / w, canvas.height / h);
    origin = [lo[0] - margin - (canvas.width / scale - w) / 2, lo[1] - margin - (canvas.height / scale - h) / 2];
  }

  function takeFrame(view) {
    let at = 0;
    const u32 = () => { const v = view.getUint32(at, true); at += 4; return v; };
    const f32 = () => { const v = view.getFloat32(at, true); at += 4; return v; };
    if (u32() !== 1) return;
    u32(); // revision
    simTime = view.getFloat64(at, true); at += 8;
    const n = u32();
    for (let i = 0; i < n; i++) {
      const id = u32();
      poses.set(id, [f32(), f32(), f32()]);
    }
    const nextScans = new Map();
    for (let m = u32(), i = 0; i < m; i++) {
      const laser = u32(), k = u32();
      nextScans.set(laser, new Float32Array(view.buffer, view.byteOffset + at, k).slice());
      at += 4 * k;
    }
    const nextSonar = new Map();
    for (let s = u32(), i = 0; i < s; i++) {
      const ring = u32(), t = u32();
      nextSonar.set(`${ring}/${t}`, f32());
    }
    const nextCharges = new Map();
    for (let b = u32(), i = 0; i < b; i++) {
      const battery = u32(), charge = f32();
      const model = scene.batteries?.[battery]?.model;
      if (model !== undefined) nextCharges.set(model, charge);
    }
    scans = nextScans;
    sonar = nextSonar;
    charges = nextCharges;
    // A trail point every quarter sim second; 40 points a robot.
    if (simTime - lastTrailTime >= 0.25 || simTime < lastTrailTime) {
      lastTrailTime = simTime;
      for (const model of models.values()) {
        const pose = poses.get(model.bodies[0]);
        if (!pose) continue;
        const trail = trails.get(model.name) ?? [];
        trail.push([pose[0], pose[1]]);
        if (trail.length > 40) trail.shift();
        trails.set(model.name, trail);
      }
    }
  }

  function takeReply(reply) {
    lastReply = reply;
    $("message").textContent = reply.ok ? "" : `${reply.op}: ${reply.message}`;
  }

  // --- geometry ------------------------------------------------------------
  const poseOf = (id) => poses.get(id) ?? bodies.get(id)?.pose;
  const compose = (a, b) => {
    const c = Math.cos(a[2]), s = Math.sin(a[2]);
    return [a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1], a[2] + b[2]];
  };
  const inverse = (a) => {
    const c = Math.cos(a[2]), s = Math.sin(a[2]);
    return [-(c * a[0] + s * a[1]), s * a[0] - c * a[1], -a[2]];
  };

  // The model under a world point (its footprints), topmost first.
  function modelAt(x, y) {
    for (const [id, body] of [...bodies].reverse()) {
      const pose = poseOf(id);
      if (!pose) continue;
      const local = compose(inverse(pose), [x, y, 0]);
      for (const f of body.footprints) {
        if (f.circle) {
          const [cx, cy, r] = f.circle;
          if ((local[0] - cx) ** 2 + (local[1] - cy) ** 2 <= r * r) return body.model;
        } else if (inside(f.polygon, local[0], local[1])) {
          return body.model;
        }
      }
    }
    return null;
  }

  function inside(points, x, y) {
    let hit = false;
    for (let i = 0, j = points.length - 2; i < points.length; j = i, i += 2) {
      const [xi, yi, xj, yj] = [points[i], points[i + 1], points[j], points[j + 1]];
      if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
    }
    return hit;
  }

  // The model pose that puts its first body at `target`: a move places a
  // model's bodies relative to where it was last placed.
  function modelPoseFor(model, target) {
    const current = poseOf(model.bodies[0]);
    return compose(compose(target, inverse(current)), model.pose);
  }

  function select(name) {
    selected = name;
    $("delete").disabled = !name;
  }

  // --- the mouse ----------------------------------------------------------
  const eventPoint = (e) => { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };

  canvas.addEventListener("mousedown", (e) => {
    const [px, py] = eventPoint(e);
    const [x, y] = toWorld(px, py);
    const name = modelAt(x, y);
    if (name) {
      select(name);
      const pose = poseOf(models.get(name).bodies[0]);
      drag = {kind: e.shiftKey ? "turn" : "move", name, start: [x, y], pose, target: pose};
    } else if ($("spawn").value) {
      const file = $("spawn").value;
      const stem = file.replace(/\.model\.yaml$|\.yaml$/, "").replace(/[^A-Za-z0-9_.-]/g, "_");
      let name;
      do { spawned += 1; name = `${stem}_${spawned}`; } while (models.has(name));
      send({op: "spawn", model: file, name, pose: [x, y, 0]});
    } else {
      select(null);
      drag = {kind: "pan", last: [px, py]};
    }
  });

  canvas.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const [px, py] = eventPoint(e);
    if (drag.kind === "pan") {
      origin = [origin[0] - (px - drag.last[0]) / scale, origin[1] + (py - drag.last[1]) / scale];
      drag.last = [px, py];
      return;
    }
    const [x, y] = toWorld(px, py);
    if (drag.kind === "move") {
      drag.target = [drag.pose[0] + x - drag.start[0], drag.pose[1] + y - drag.start[1], drag.pose[2]];
    } else {
      const a0 = Math.atan2(drag.start[1] - drag.pose[1], drag.start[0] - drag.pose[0]);
      const a1 = Math.atan2(y - drag.pose[1], x - drag.pose[0]);
      drag.target = [drag.pose[0], drag.pose[1], drag.pose[2] + a1 - a0];
    }
  });

  window.addEventListener("mouseup", () => {
    if (drag && drag.kind !== "pan" && drag.target !== drag.pose) {
      const model = models.get(drag.name);
      if (model) send({op: "move", name: drag.name, pose: modelPoseFor(model, drag.target)});
    }
    drag = null;
  });

  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    if (e.shiftKey && selected) {
      const model = models.get(selected);
      const pose = poseOf(model.bodies[0]);
      const turn = (e.deltaY < 0 ? 1 : -1) * Math.PI / 12;
      send({op: "move", name: selected, pose: modelPoseFor(model, [pose[0], pose[1], pose[2] + turn])});
      return;
    }
    const [px, py] = eventPoint(e);
    const [x, y] = toWorld(px, py);
    scale *= e.deltaY < 0 ? 1.2 : 1 / 1.2;
    origin = [x - px / scale, y - (canvas.height - py) / scale];
  }, {passive: false});

  window.addEventListener("keydown", (e) => {
    if ((e.key === "Delete" || e.key === "Backspace") && selected && document.activeElement === document.body) {
      send({op: "delete", name: selected});
    }
  });
  $("delete").onclick = () => selected && send({op: "delete", name: selected});
  $("pause").onclick = () => send({op: "pause"});
  $("resume").onclick = () => send({op: "resume"});
  $("step").onclick = () => send({op: "step", steps: 1});
  $("readings").onchange = (e) => send({op: "readings", on: e.target.checked});

  // --- drawing ---------------------------------------------------------------
  function draw() {
    requestAnimationFrame(draw);
    if (!scene) return;
    drawn += 1;
    ctx.fillStyle = "#fbfbf8";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    drawWalls();
    if ($("trails").checked) drawTrails();
    if ($("readings").checked) drawReadings();
    drawBodies();
    if ($("names").checked) drawNames();
    drawStatus();
  }

  function drawWalls() {
    ctx.lineWidth = 2;
    ctx.lineCap = "round";
    for (const layer of scene.layers) {
      ctx.strokeStyle = rgba(visible(layer.color), 1);
      ctx.beginPath();
      const s = layer.segments;
      for (let i = 0; i < s.length; i += 4) {
        const a = toScreen(s[i], s[i + 1]), b = toScreen(s[i + 2], s[i + 3]);
        ctx.moveTo(a[0], a[1]);
        ctx.lineTo(b[0], b[1]);
      }
      ctx.stroke();
    }
  }

  function drawTrails() {
    ctx.lineWidth = 1;
    ctx.strokeStyle = "rgba(40, 90, 160, 0.35)";
    ctx.beginPath();
    for (const trail of trails.values()) {
      trail.forEach(([x, y], i) => {
        const p = toScreen(x, y);
        if (i === 0) ctx.moveTo(p[0], p[1]); else ctx.lineTo(p[0], p[1]);
      });
    }
    ctx.stroke();
  }

  function drawReadings() {
    ctx.fillStyle = "rgba(220, 40, 40, 0.8)";
    scene.lasers.forEach((laser, index) => {
      const ranges = scans.get(index);
      const body = poseOf(laser.body);
      if (!ranges || !body) return;
      const mount = compose(body, laser.origin);
      const step = laser.upside_down ? -laser.increment : laser.increment;
      const start = laser.upside_down ? -laser.angle_min : laser.angle_min;
      for (let i = 0; i < ranges.length; i++) {
        const r = ranges[i];
        if (!(r <= laser.range)) continue;
        const a = mount[2] + start + i * step;
        const p = toScreen(mount[0] + r * Math.cos(a), mount[1] + r * Math.sin(a));
        ctx.fillRect(p[0] - 1.5, p[1] - 1.5, 3, 3);
      }
    });
    ctx.fillStyle = "rgba(230, 150, 20, 0.25)";
    scene.sonars.forEach((ring, index) => {
      const body = poseOf(ring.body);
      if (!body) return;
      ring.transducers.forEach(([x, y, theta, fov, max], t) => {
        const range = sonar.get(`${index}/${t}`);
        if (range === undefined) return;
        const at = compose(body, [x, y, theta]);
        const c = toScreen(at[0], at[1]);
        ctx.beginPath();
        ctx.moveTo(c[0], c[1]);
        // Canvas angles run clockwise (y down).
        ctx.arc(c[0], c[1], Math.min(range, max) * scale, -(at[2] + fov / 2), -(at[2] - fov / 2));
        ctx.closePath();
        ctx.fill();
      });
    });
  }

  function drawBodies() {
    for (const [id, body] of bodies) {
      let pose = poseOf(id);
      if (!pose) continue;
      if (drag && drag.kind !== "pan" && body.model === drag.name) {
        // Dragged: drawn where it will land, relative to the first body.
        const first = poseOf(models.get(drag.name).bodies[0]);
        pose = compose(drag.target, compose(inverse(first), pose));
      }
      ctx.fillStyle = rgba(visible(body.color), 0.85);
      ctx.strokeStyle = body.model === selected ? "#ff8800" : "rgba(0,0,0,0.6)";
      ctx.lineWidth = body.model === selected ? 3 : 1;
      for (const f of body.footprints) {
        ctx.beginPath();
        if (f.circle) {
          const c = compose(pose, [f.circle[0], f.circle[1], 0]);
          const p = toScreen(c[0], c[1]);
          ctx.arc(p[0], p[1], Math.max(f.circle[2] * scale, 1.5), 0, 2 * Math.PI);
          // The heading, from the centre.
          const h = compose(pose, [f.circle[0] + f.circle[2], f.circle[1], 0]);
          const q = toScreen(h[0], h[1]);
          ctx.moveTo(p[0], p[1]);
          ctx.lineTo(q[0], q[1]);
        } else {
          for (let i = 0; i < f.polygon.length; i += 2) {
            const c = compose(pose, [f.polygon[i], f.polygon[i + 1], 0]);
            const p = toScreen(c[0], c[1]);
            if (i === 0) ctx.moveTo(p[0], p[1]); else ctx.lineTo(p[0], p[1]);
          }
          ctx.closePath();
        }
        ctx.fill();
        ctx.stroke();
      }
    }
  }

  function drawNames() {
    ctx.fillStyle = "#223";
    ctx.font = "11px system-ui, sans-serif";
    for (const model of models.values()) {
      const pose = poseOf(model.bodies[0]);
      if (!pose) continue;
      const p = toScreen(pose[0], pose[1]);
      const charge = charges.get(model.name);
      // A robot's battery beside its name, red once below a fifth.
      const label = charge === undefined ? model.name : `${model.name} ${Math.round(charge * 100)} %`;
      ctx.fillStyle = charge !== undefined && charge < 0.2 ? "#c22" : "#223";
      ctx.fillText(label, p[0] + 6, p[1] - 6);
    }
  }

  function drawStatus() {
    const s = status;
    const text = s && s.clock
      ? `t = ${simTime.toFixed(2)} s   ${s.rtf.toFixed(2)}× real time (${s.clock}${s.paused ? ", paused" : ""})   ` +
        `step ${s.step}   ${s.robots} robots (${s.models} models)   ${s.nodes} nodes live` +
        (s.unclaimed_count ? `   ${s.unclaimed_count} plugin instance(s) served by no node` : "") +
        `   ${fps} fps`
      : `t = ${simTime.toFixed(2)} s   ${fps} fps`;
    $("status").textContent = text;
  }

  requestAnimationFrame(draw);

  // For tests and the curious: what the page knows and draws.
  window.flotillaView = {
    ready: () => scene !== null && poses.size > 0,
    fps: () => fps,
    lastReply: () => lastReply,
    toScreen,
    toWorld,
    modelAt,
    chooseModel: (file) => { $("spawn").value = file; return $("spawn").value === file; },
    pixel: (px, py) => Array.from(ctx.getImageData(Math.round(px), Math.round(py), 1, 1).data),
    summary: () => ({
      revision: scene?.revision,
      walls: scene ? scene.layers.reduce((n, l) => n + l.segments.length / 4, 0) : 0,
      firstWall: scene && scene.layers[0]?.segments.slice(0, 4),
      models: [...models.values()].map((m) => {
        const pose = poseOf(m.bodies[0]);
        return {name: m.name, pose, screen: pose && toScreen(pose[0], pose[1]), battery: charges.get(m.name)};
      }),
      time: simTime,
      fps,
    }),
  };
})();
