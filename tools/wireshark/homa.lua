-- SPDX-License-Identifier: BSD-2-Clause
--
-- homa.lua - a Wireshark/tshark dissector for Homa packets.
--
-- Decodes every Homa packet type (DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY,
-- CUTOFFS, FREEZE, NEED_ACK, ACK) as laid out in the wire format of
-- libhoma's protocol description (common header of 28 bytes, big-endian,
-- packed), carried either
--   - directly in IPv4/IPv6 as IP protocol 146 (registered on "ip.proto"), or
--   - as the payload of a UDP datagram (libhoma's unprivileged transport).
--
-- Homa over UDP has no well-known port, and this dissector does not guess
-- "is this Homa" from the bytes of other protocols.  UDP traffic is decoded
-- as Homa when one of its ports is in the preference homa.udp_ports (empty
-- by default), or with "Decode As" (tshark: -d udp.port==4000,homa).
--
--   tshark -X lua_script:homa.lua -o homa.udp_ports:4000 -r capture.pcap
--   tshark -X lua_script:homa.lua -d udp.port==4000,homa -r capture.pcap
--
-- A UDP datagram that holds a whole segmentation-offload (GSO) batch, as a
-- capture taken before segmentation shows it (always on loopback), is split
-- into its Homa packets, one tree each.
--
-- See README.md in this folder for installation.  Filter fields are all
-- under "homa." (homa.type, homa.sender_id, homa.data.offset, ...).

local HOMA_IP_PROTO = 146

local COMMON_LEN = 28
local MAX_MESSAGE_LENGTH = 1000000
local MAX_ACKS = 5
local ACK_ENTRY_LEN = 10

local T_DATA = 0x10
local T_GRANT = 0x11
local T_RESEND = 0x12
local T_RPC_UNKNOWN = 0x13
local T_BUSY = 0x14
local T_CUTOFFS = 0x15
local T_FREEZE = 0x16
local T_NEED_ACK = 0x17
local T_ACK = 0x18

local type_names = {
	[T_DATA] = "DATA",
	[T_GRANT] = "GRANT",
	[T_RESEND] = "RESEND",
	[T_RPC_UNKNOWN] = "RPC_UNKNOWN",
	[T_BUSY] = "BUSY",
	[T_CUTOFFS] = "CUTOFFS",
	[T_FREEZE] = "FREEZE",
	[T_NEED_ACK] = "NEED_ACK",
	[T_ACK] = "ACK",
}

-- Length of the full header of each type (DATA: without its payload).
local header_len = {
	[T_DATA] = 56,
	[T_GRANT] = 33,
	[T_RESEND] = 37,
	[T_RPC_UNKNOWN] = 28,
	[T_BUSY] = 28,
	[T_CUTOFFS] = 62,
	[T_FREEZE] = 28,
	[T_NEED_ACK] = 28,
	[T_ACK] = 80,
}

local homa = Proto("homa", "Homa Transport Protocol")

-- ---------------------------------------------------------------------
-- Fields
-- ---------------------------------------------------------------------
local F = {
	-- common header
	sport = ProtoField.uint16("homa.sport", "Source port", base.DEC),
	dport = ProtoField.uint16("homa.dport", "Destination port", base.DEC),
	port = ProtoField.uint16("homa.port", "Port", base.DEC),
	sequence = ProtoField.uint32("homa.sequence", "Sequence", base.DEC),
	unused = ProtoField.uint24("homa.unused", "Unused", base.HEX),
	type = ProtoField.uint8("homa.type", "Type", base.HEX, type_names),
	doff = ProtoField.uint8("homa.doff", "Data offset", base.HEX),
	hlen = ProtoField.uint8("homa.doff.hlen", "Header length (doff)",
				base.DEC, nil, 0xF0,
				"high nibble of doff, in 32-bit words"),
	flags = ProtoField.uint8("homa.flags", "Flags", base.HEX),
	window = ProtoField.uint16("homa.window", "Window", base.DEC),
	checksum = ProtoField.uint16("homa.checksum", "Checksum (ignored)",
				     base.HEX),
	urgent = ProtoField.uint16("homa.urgent", "Urgent", base.HEX),
	sender_id = ProtoField.uint64("homa.sender_id", "Sender id", base.DEC),
	rpc_id = ProtoField.uint64("homa.rpc_id", "Receiver's RPC id",
				   base.DEC, nil, nil,
				   "the id of the RPC at the receiver: sender_id XOR 1"),
	from_client = ProtoField.bool("homa.from_client", "Sent by the client",
				      base.NONE, nil, nil,
				      "true when sender_id is even (client ids are even)"),
	priority = ProtoField.uint8("homa.priority", "Priority (from IP TOS)",
				    base.DEC, nil, nil,
				    "IPv4 TOS / IPv6 traffic class >> 5"),
	trailing = ProtoField.bytes("homa.trailing", "Bytes after the header"),
	gso_index = ProtoField.uint16("homa.gso.index",
		"Packet in the GSO batch", base.DEC, nil, nil,
		"0-based position of this packet in a datagram holding a "
		.. "segmentation-offload batch"),
	gso_count = ProtoField.uint16("homa.gso.count",
		"Packets in the GSO batch", base.DEC),
	gso_size = ProtoField.uint16("homa.gso.size",
		"GSO segment size", base.DEC, nil, nil,
		"length of every packet of the batch but the last"),

	-- DATA
	msg_len = ProtoField.uint32("homa.data.message_length",
				    "Message length", base.DEC),
	incoming = ProtoField.uint32("homa.data.incoming", "Incoming",
				     base.DEC),
	ack_cid = ProtoField.uint64("homa.data.ack.client_id",
				    "Piggy-backed ack: client id", base.DEC),
	ack_port = ProtoField.uint16("homa.data.ack.server_port",
				     "Piggy-backed ack: server port", base.DEC),
	cutoff_version = ProtoField.uint16("homa.data.cutoff_version",
					   "Cutoff version", base.DEC),
	retransmit = ProtoField.uint8("homa.data.retransmit", "Retransmit",
				      base.DEC),
	pad = ProtoField.bytes("homa.data.pad", "Pad"),
	seg_offset = ProtoField.uint32("homa.data.seg_offset", "seg.offset",
				       base.DEC),
	offset = ProtoField.uint32("homa.data.offset", "Offset", base.DEC,
				   nil, nil,
				   "seg.offset, or sequence when seg.offset is 0xFFFFFFFF"),
	payload_len = ProtoField.uint32("homa.data.payload_length",
					"Payload length", base.DEC),
	data_end = ProtoField.uint64("homa.data.end", "End offset", base.DEC,
				     nil, nil, "offset + payload length"),
	payload = ProtoField.bytes("homa.data.payload", "Payload"),

	-- GRANT
	grant_offset = ProtoField.uint32("homa.grant.offset", "Offset",
					 base.DEC),
	grant_prio = ProtoField.uint8("homa.grant.priority", "Priority",
				      base.DEC),

	-- RESEND
	resend_offset = ProtoField.uint32("homa.resend.offset", "Offset",
					  base.DEC),
	resend_length = ProtoField.uint32("homa.resend.length", "Length",
					  base.DEC, { [0xFFFFFFFF] =
						"everything sent so far" }),
	resend_prio = ProtoField.uint8("homa.resend.priority", "Priority",
				       base.DEC),

	-- CUTOFFS
	cutoff = ProtoField.uint32("homa.cutoffs.cutoff", "Unscheduled cutoff",
				   base.DEC),
	cutoffs_version = ProtoField.uint16("homa.cutoffs.version",
					    "Cutoff version", base.DEC),

	-- ACK
	num_acks = ProtoField.uint16("homa.ack.num_acks", "Number of acks",
				     base.DEC),
	ack = ProtoField.none("homa.ack.entry", "Ack"),
	ack_entry_cid = ProtoField.uint64("homa.ack.client_id", "Client id",
					  base.DEC),
	ack_entry_port = ProtoField.uint16("homa.ack.server_port",
					   "Server port", base.DEC),
	ack_unused = ProtoField.bytes("homa.ack.unused", "Unused entries"),
}

homa.fields = {
	F.sport, F.dport, F.port, F.sequence, F.unused, F.type, F.doff,
	F.hlen, F.flags, F.window, F.checksum, F.urgent, F.sender_id,
	F.rpc_id, F.from_client, F.priority, F.trailing,
	F.gso_index, F.gso_count, F.gso_size,
	F.msg_len, F.incoming, F.ack_cid, F.ack_port, F.cutoff_version,
	F.retransmit, F.pad, F.seg_offset, F.offset, F.payload_len,
	F.data_end, F.payload,
	F.grant_offset, F.grant_prio,
	F.resend_offset, F.resend_length, F.resend_prio,
	F.cutoff, F.cutoffs_version,
	F.num_acks, F.ack, F.ack_entry_cid, F.ack_entry_port, F.ack_unused,
}

-- ---------------------------------------------------------------------
-- Expert info
-- ---------------------------------------------------------------------
local E = {
	short = ProtoExpert.new("homa.short.expert",
		"Packet shorter than its Homa header",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_type = ProtoExpert.new("homa.bad_type.expert",
		"Unknown Homa packet type",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_length = ProtoExpert.new("homa.bad_length.expert",
		"DATA message length outside 1..1,000,000",
		expert.group.MALFORMED, expert.severity.ERROR),
	beyond = ProtoExpert.new("homa.beyond_message.expert",
		"DATA bytes outside the message",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_prio = ProtoExpert.new("homa.bad_priority.expert",
		"Priority above 7",
		expert.group.PROTOCOL, expert.severity.WARN),
	acks_clamped = ProtoExpert.new("homa.acks_clamped.expert",
		"num_acks above 5 (receivers read 5)",
		expert.group.PROTOCOL, expert.severity.WARN),
	offsets_differ = ProtoExpert.new("homa.offsets_differ.expert",
		"sequence and seg.offset disagree (seg.offset wins)",
		expert.group.SEQUENCE, expert.severity.NOTE),
	trailing = ProtoExpert.new("homa.trailing.expert",
		"Bytes after the control header",
		expert.group.PROTOCOL, expert.severity.NOTE),
	retransmit = ProtoExpert.new("homa.retransmit.expert",
		"Retransmitted DATA (answer to a RESEND)",
		expert.group.SEQUENCE, expert.severity.CHAT),
}

homa.experts = {
	E.short, E.bad_type, E.bad_length, E.beyond, E.bad_prio,
	E.acks_clamped, E.offsets_differ, E.trailing, E.retransmit,
}

-- ---------------------------------------------------------------------
-- Preferences: which UDP ports carry Homa
-- ---------------------------------------------------------------------
homa.prefs.udp_ports = Pref.range("UDP ports", "",
	"UDP ports (list or ranges, e.g. 4000,32768-65535) whose datagrams "
	.. "are decoded as Homa packets.  Empty: none (use Decode As).",
	65535)

local udp_table = DissectorTable.get("udp.port")
local ip_table = DissectorTable.get("ip.proto")
local registered_ports = ""

function homa.prefs_changed()
	local want = homa.prefs.udp_ports or ""
	if want == registered_ports then
		return
	end
	if registered_ports ~= "" then
		udp_table:remove(registered_ports, homa)
	end
	if want ~= "" then
		udp_table:add(want, homa)
	end
	registered_ports = want
end

-- The IP priority of the packet, from the (innermost) IPv4 TOS byte or
-- IPv6 traffic class.
local f_ip_dsfield = Field.new("ip.dsfield")
local f_ipv6_tclass = Field.new("ipv6.tclass")

local function last_value(field)
	local all = { field() }
	local v = all[#all]
	if v == nil then
		return nil
	end
	return v.value
end

-- ---------------------------------------------------------------------
-- Dissection of each type's body
-- ---------------------------------------------------------------------
local function check_priority(item, prio)
	if prio > 7 then
		item:add_proto_expert_info(E.bad_prio)
	end
end

-- DATA: returns the text for the Info column.  The payload length comes
-- from the packet's length on the wire (a capture may keep less of it).
local function dissect_data(tvb, tree, info)
	local len = tvb:reported_len()
	local caplen = tvb:len()
	local sequence = tvb(4, 4):uint()
	local msg_len = tvb(28, 4):uint()
	local ack_cid = tvb(36, 8):uint64()
	local seg = tvb(52, 4):uint()
	local offset = seg
	if seg == 0xFFFFFFFF then
		offset = sequence
	end
	local plen = len - 56

	local li = tree:add(F.msg_len, tvb(28, 4))
	if msg_len < 1 or msg_len > MAX_MESSAGE_LENGTH then
		li:add_proto_expert_info(E.bad_length)
	end
	tree:add(F.incoming, tvb(32, 4))
	tree:add(F.ack_cid, tvb(36, 8))
	tree:add(F.ack_port, tvb(44, 2))
	tree:add(F.cutoff_version, tvb(46, 2))
	local ri = tree:add(F.retransmit, tvb(48, 1))
	if tvb(48, 1):uint() ~= 0 then
		ri:add_proto_expert_info(E.retransmit)
	end
	tree:add(F.pad, tvb(49, 3))
	local si = tree:add(F.seg_offset, tvb(52, 4))
	if seg ~= 0xFFFFFFFF and seg ~= sequence then
		si:add_proto_expert_info(E.offsets_differ)
	end
	local oi = tree:add(F.offset, tvb(52, 4), offset)
	oi:set_generated()
	tree:add(F.payload_len, plen):set_generated()
	tree:add(F.data_end, UInt64(offset + plen)):set_generated()
	-- Written so that nothing overflows: offset < length and
	-- plen <= length - offset.
	if offset >= msg_len or plen > msg_len - offset then
		oi:add_proto_expert_info(E.beyond)
	end
	if caplen > 56 then
		tree:add(F.payload, tvb(56, caplen - 56))
	end

	info = info .. string.format(" offset %d len %d of %d", offset, plen,
				     msg_len)
	if tvb(48, 1):uint() ~= 0 then
		info = info .. " retransmit"
	end
	if ack_cid ~= UInt64(0) then
		info = info .. string.format(" ack %s:%d", tostring(ack_cid),
					     tvb(44, 2):uint())
	end
	return info
end

local function dissect_grant(tvb, tree, info)
	tree:add(F.grant_offset, tvb(28, 4))
	local prio = tvb(32, 1):uint()
	check_priority(tree:add(F.grant_prio, tvb(32, 1)), prio)
	return info .. string.format(" offset %d prio %d", tvb(28, 4):uint(),
				     prio)
end

local function dissect_resend(tvb, tree, info)
	local length = tvb(32, 4):uint()
	local prio = tvb(36, 1):uint()
	tree:add(F.resend_offset, tvb(28, 4))
	tree:add(F.resend_length, tvb(32, 4))
	check_priority(tree:add(F.resend_prio, tvb(36, 1)), prio)
	local ltext = tostring(length)
	if length == 0xFFFFFFFF then
		ltext = "all"
	end
	return info .. string.format(" offset %d length %s prio %d",
				     tvb(28, 4):uint(), ltext, prio)
end

local function dissect_cutoffs(tvb, tree, info)
	local values = {}
	for i = 0, 7 do
		local r = tvb(28 + 4 * i, 4)
		tree:add(F.cutoff, r):prepend_text("Priority " .. i .. ": ")
		values[#values + 1] = tostring(r:uint())
	end
	tree:add(F.cutoffs_version, tvb(60, 2))
	return info .. string.format(" version %d [%s]", tvb(60, 2):uint(),
				     table.concat(values, ","))
end

local function dissect_ack(tvb, tree, info)
	local num = tvb(28, 2):uint()
	local ni = tree:add(F.num_acks, tvb(28, 2))
	local n = num
	if n > MAX_ACKS then
		ni:add_proto_expert_info(E.acks_clamped)
		n = MAX_ACKS
	end
	local acks = {}
	for i = 0, n - 1 do
		local base_off = 30 + ACK_ENTRY_LEN * i
		local cid = tvb(base_off, 8):uint64()
		local port = tvb(base_off + 8, 2):uint()
		local et = tree:add(F.ack, tvb(base_off, ACK_ENTRY_LEN))
		et:append_text(string.format(" %d: client id %s, server port %d",
					     i, tostring(cid), port))
		et:add(F.ack_entry_cid, tvb(base_off, 8))
		et:add(F.ack_entry_port, tvb(base_off + 8, 2))
		acks[#acks + 1] = tostring(cid) .. ":" .. port
	end
	if n < MAX_ACKS then
		local first = 30 + ACK_ENTRY_LEN * n
		tree:add(F.ack_unused, tvb(first, 80 - first))
	end
	return info .. string.format(" acks %d [%s]", num,
				     table.concat(acks, ","))
end

local body = {
	[T_DATA] = dissect_data,
	[T_GRANT] = dissect_grant,
	[T_RESEND] = dissect_resend,
	[T_CUTOFFS] = dissect_cutoffs,
	[T_ACK] = dissect_ack,
}

-- ---------------------------------------------------------------------
-- Segmentation offload (GSO) batches
-- ---------------------------------------------------------------------
-- libhoma hands runs of packets for one address to the kernel as one UDP
-- send with UDP_SEGMENT: the kernel cuts the buffer into datagrams of the
-- segment size (every packet of the run has that size but the last, which
-- may be smaller), each a complete Homa packet.  On the wire they are
-- separate datagrams, but a capture taken before segmentation (loopback, or
-- a NIC doing the segmentation) shows the whole run as one datagram.  The
-- segment size is not in the capture: it is the length of the first packet,
-- known for control packets and found for DATA as the one boundary where
-- every segment starts with a header like the first one.

-- Whether a Homa header like the first one (same ports, unused bytes zero,
-- a valid type and its doff) starts at byte b (0-based) of raw.
local function header_at(raw, b)
	if #raw < b + COMMON_LEN then
		return false
	end
	if raw:sub(b + 1, b + 4) ~= raw:sub(1, 4) or
	   raw:sub(b + 9, b + 11) ~= "\0\0\0" then
		return false
	end
	local t = raw:byte(b + 12)
	local doff = raw:byte(b + 13)
	if header_len[t] == nil then
		return false
	end
	if t == T_DATA then
		return doff == 0xE0
	end
	return doff == 0x50
end

-- Whether raw splits into packets of seg bytes (the last may be shorter),
-- each starting with a header like the first, each as long as its type's
-- header, control packets exactly that long.
local function splits_at(raw, seg)
	local len = #raw
	local b = 0
	while b < len do
		local size = math.min(seg, len - b)
		if b > 0 and not header_at(raw, b) then
			return false
		end
		local t = raw:byte(b + 12)
		if size < header_len[t] then
			return false
		end
		if t ~= T_DATA and size ~= header_len[t] then
			return false
		end
		b = b + size
	end
	return true
end

-- The segment size of a GSO batch in tvb, or nil for a single packet (also
-- when the capture did not keep the whole datagram).
local function segment_size(tvb)
	local len = tvb:len()
	if len < 2 * COMMON_LEN or len ~= tvb:reported_len() then
		return nil
	end
	local t = tvb(11, 1):uint()
	local need = header_len[t]
	if need == nil or len <= need then
		return nil
	end
	local raw = tvb:raw(0, len)
	if t ~= T_DATA then
		if splits_at(raw, need) then
			return need
		end
		return nil
	end
	-- DATA: try each place where the first packet's ports occur again.
	local ports = raw:sub(1, 4)
	local pos = header_len[T_DATA] + 2
	while true do
		local i = raw:find(ports, pos, true)
		if i == nil then
			return nil
		end
		if splits_at(raw, i - 1) then
			return i - 1
		end
		pos = i + 1
	end
end

-- ---------------------------------------------------------------------
-- The dissector
-- ---------------------------------------------------------------------

-- dissect_packet: one Homa packet, all of tvb.  Returns the Info text.
local function dissect_packet(tvb, pinfo, tree, gso)
	local len = tvb:reported_len()    -- on the wire
	local caplen = tvb:len()          -- in the capture
	local root = tree:add(homa, tvb())

	if gso then
		root:add(F.gso_index, gso.index):set_generated()
		root:add(F.gso_count, gso.count):set_generated()
		root:add(F.gso_size, gso.size):set_generated()
	end

	if len < COMMON_LEN then
		root:add_proto_expert_info(E.short,
			string.format("%d bytes: shorter than the %d-byte "
				      .. "common header", len, COMMON_LEN))
		return string.format("Homa: short packet (%d bytes)", len)
	end

	if caplen < COMMON_LEN then
		root:append_text(" [cut short by the capture's snap length]")
		return "Homa (header not captured)"
	end

	local sport = tvb(0, 2):uint()
	local dport = tvb(2, 2):uint()
	local ptype = tvb(11, 1):uint()
	local sender_id = tvb(20, 8):uint64()
	local name = type_names[ptype]

	root:add(F.sport, tvb(0, 2))
	root:add(F.dport, tvb(2, 2))
	root:add(F.port, tvb(0, 2)):set_hidden()
	root:add(F.port, tvb(2, 2)):set_hidden()
	root:add(F.sequence, tvb(4, 4))
	root:add(F.unused, tvb(8, 3))
	local ti = root:add(F.type, tvb(11, 1))
	local di = root:add(F.doff, tvb(12, 1))
	di:add(F.hlen, tvb(12, 1))
	root:add(F.flags, tvb(13, 1))
	root:add(F.window, tvb(14, 2))
	root:add(F.checksum, tvb(16, 2))
	root:add(F.urgent, tvb(18, 2))
	root:add(F.sender_id, tvb(20, 8))
	root:add(F.rpc_id, tvb(20, 8), sender_id:bxor(UInt64(1)))
		:set_generated()
	local from_client = tvb(27, 1):uint() % 2 == 0
	root:add(F.from_client, tvb(27, 1), from_client):set_generated()

	local prio = last_value(f_ipv6_tclass) or last_value(f_ip_dsfield)
	if prio ~= nil then
		root:add(F.priority, math.floor(prio / 32) % 8):set_generated()
	end

	local info = string.format("%s %d \226\134\146 %d id %s",
				   name or string.format("type 0x%02x", ptype),
				   sport, dport, tostring(sender_id))
	if name == nil then
		ti:add_proto_expert_info(E.bad_type,
			string.format("Unknown Homa packet type 0x%02x "
				      .. "(valid: 0x10..0x18)", ptype))
		return info .. " [unknown type]"
	end
	root:append_text(", " .. name .. ", id " .. tostring(sender_id))

	local need = header_len[ptype]
	if len < need then
		ti:add_proto_expert_info(E.short,
			string.format("%s packet of %d bytes: its header "
				      .. "has %d", name, len, need))
		return info .. " [short]"
	end
	if caplen < need then
		root:append_text(" [cut short by the capture's snap length]")
		return info .. " [header not captured]"
	end

	if body[ptype] then
		info = body[ptype](tvb, root, info)
	end
	if ptype ~= T_DATA and caplen > need then
		root:add(F.trailing, tvb(need, caplen - need))
			:add_proto_expert_info(E.trailing)
	end
	return info
end

function homa.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "Homa"

	local seg = segment_size(tvb)
	if seg == nil then
		pinfo.cols.info = dissect_packet(tvb, pinfo, tree, nil)
		return len
	end
	-- A batch: every packet is in the capture.

	local count = math.floor((len + seg - 1) / seg)
	local infos = {}
	local b = 0
	while b < len do
		local size = math.min(seg, len - b)
		infos[#infos + 1] = dissect_packet(tvb(b, size):tvb(), pinfo,
			tree, { index = #infos, count = count, size = seg })
		b = b + size
	end
	pinfo.cols.info = string.format("[%d Homa packets] ", count)
		.. table.concat(infos, " | ")
	return len
end

-- Raw IP (IPv4 and IPv6 share this table).
ip_table:add(HOMA_IP_PROTO, homa)
-- Offer Homa in "Decode As" for UDP ports (tshark -d udp.port==P,homa).
udp_table:add_for_decode_as(homa)
