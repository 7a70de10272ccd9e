#!/usr/bin/env python3
# Scripts/vm/dummy-hcd-iso.py: gives the kernel's dummy_hcd isochronous endpoints, for the rig's
# virtual USB DualSense (a UAC2 + HID gadget; see Scripts/vm/README.md).
#
# Usage: dummy-hcd-iso.py SOURCE OUTPUT
#   SOURCE  drivers/usb/gadget/udc/dummy_hcd.c of the rig's linux-source (GPL-2.0, never committed)
#   OUTPUT  the edited copy, built out of tree by Scripts/vm/setup
#
# Stock dummy_hcd comments its iso endpoints out of ep_info and fails every iso URB with -EINVAL,
# so a gadget with a UAC function cannot bind (`failed to start ...: -19`). The edit:
#   - restores the six "-iso" endpoints in ep_info;
#   - runs its timer every 1 ms instead of every 125 us;
#   - moves one packet per interval (1 ms full speed, 125 us x urb->interval high speed), paced by
#     ktime per endpoint so the stream keeps the bus's rate however late the 125 us timer runs:
#     a packet takes the endpoint's first queued request (OUT: the host's bytes into it; IN: its
#     bytes into the packet) and every iso descriptor gets its status and actual length. With no
#     request queued an OUT packet is dropped and an IN packet is empty, as on a real bus.
# Test-grade, not upstream. Each anchor must match exactly once, so a changed source fails loudly.
import re
import sys

source, output = sys.argv[1], sys.argv[2]
text = open(source, encoding="utf-8").read()


def replace(old, new, count=1, regex=False):
    global text
    found = len(re.findall(old, text)) if regex else text.count(old)
    if found != count:
        sys.exit(f"dummy-hcd-iso: expected {count} match(es) of {old!r} in {source}, found {found}; update the recipe")
    text = re.sub(old, new, text) if regex else text.replace(old, new)


# The iso endpoints, commented out in pairs.
replace(r'/\*\n(\tEP_INFO\("ep\d+in-iso",\n[^\n]*\n\tEP_INFO\("ep\d+out-iso",\n[^\n]*\n)\*/\n', r"\1", count=3, regex=True)

# The stock timer runs every 125 us (a microframe): under TCG that softirq alone starves the guest
# (the pad's 15 ms sound buffer underran 14 times a second). Every 1 ms is enough: iso packets are
# paced by ktime below, several per tick when due; control and bulk transfers just take longer.
replace("#define DUMMY_TIMER_INT_NSECS\t125000 /* 1 microframe */", "#define DUMMY_TIMER_INT_NSECS\t1000000 /* 1 frame (rig) */")

# Per-endpoint packet clock, per-URB packet index.
replace("\tunsigned\t\t\tstream_en:1;\n};",
        "\tunsigned\t\t\tstream_en:1;\n\tktime_t\t\t\t\tiso_next;\t/* when the next iso packet is due */\n};")
replace("\tu32\t\t\tmiter_started;\n};", "\tu32\t\t\tmiter_started;\n\tint\t\t\tiso_packet;\t/* next iso_frame_desc to move */\n};")
replace("\turbp->miter_started = 0;\n", "\turbp->miter_started = 0;\n\turbp->iso_packet = 0;\n")

iso = r'''
/* Moves the iso packets of `urbp` that are due by now; caller must own lock. */
static void dummy_iso(struct dummy *dum, struct urbp *urbp, struct dummy_ep *ep, int *status)
{
	struct urb *urb = urbp->urb;
	int to_host = usb_urb_dir_in(urb);
	ktime_t now = ktime_get();
	s64 period = (s64)max(urb->interval, 1) *
		(dum->gadget.speed >= USB_SPEED_HIGH ? 125 * NSEC_PER_USEC : NSEC_PER_MSEC);

	if (urb->num_sgs || !urb->transfer_buffer) {
		*status = -EINVAL;
		return;
	}
	/* a stream that starts, or resumes after a pause, starts now */
	if (!ep->iso_next || ktime_before(ep->iso_next, ktime_sub_ns(now, 20 * NSEC_PER_MSEC)))
		ep->iso_next = now;
	while (urbp->iso_packet < urb->number_of_packets && !ktime_after(ep->iso_next, now)) {
		struct usb_iso_packet_descriptor *d = &urb->iso_frame_desc[urbp->iso_packet];
		struct dummy_request *req = list_first_entry_or_null(&ep->queue, struct dummy_request, queue);
		u8 *packet = (u8 *)urb->transfer_buffer + d->offset;
		unsigned len = 0;

		if (req) {
			len = min_t(unsigned, d->length, req->req.length);
			if (to_host)
				memcpy(packet, req->req.buf, len);
			else
				memcpy(req->req.buf, packet, len);
			req->req.actual = len;
			req->req.status = 0;
			list_del_init(&req->queue);
			dummy_giveback(dum, &ep->ep, req);
		}
		d->actual_length = to_host ? len : d->length;
		d->status = 0;
		urb->actual_length += d->actual_length;
		urbp->iso_packet++;
		ep->iso_next = ktime_add_ns(ep->iso_next, period);
	}
	if (urbp->iso_packet >= urb->number_of_packets) {
		urb->error_count = 0;
		*status = 0;
	}
}

/*
 * Drive both sides of the transfers;'''
replace("\n/*\n * Drive both sides of the transfers;", iso)

replace("\t\t\tlimit = max(limit, periodic_bytes(dum, ep));\n\t\t\tstatus = -EINVAL;\t/* fail all xfers */\n",
        "\t\t\tep->last_io = jiffies;\n\t\t\tdummy_iso(dum, urbp, ep, &status);\n")

open(output, "w", encoding="utf-8").write(text)
