// SPDX-License-Identifier: GPL-2.0
/*
 * pwm-sim: a simulated PWM chip for the swift-haptics kernel VM rig.
 *
 * Registers one platform device "pwm-sim" with a pwm_chip of `channels`
 * channels (module parameter, default 4). apply() stores the requested state
 * and get_state() returns it, so /sys/class/pwm/pwmchipN/{export,unexport}
 * and pwmM/{period,duty_cycle,polarity,enable} behave like real hardware
 * that does exactly what it is told; /sys/kernel/debug/pwm shows the state.
 *
 * /sys/kernel/debug/pwm-sim/history lists, oldest first, the last HISTORY states
 * each channel was given, one line each: "CHANNEL T_NS PERIOD DUTY POLARITY ENABLED"
 * (T_NS: CLOCK_MONOTONIC nanoseconds; POLARITY: 0 normal, 1 inversed). The PWM
 * core calls apply() only for a state that differs from the current one, so
 * every line is a change. Writing a channel number to the file clears that
 * channel's history. Tests use it to check the order of what a driver did.
 *
 * /sys/kernel/debug/pwm-sim/claim requests a channel the way a kernel driver
 * does (pwm-vibrator, a backlight, a fan): writing N requests channel N with the
 * label "pwm-sim-claim", so exporting it through sysfs fails with EBUSY as on a
 * board whose device tree gives the channel to a driver; writing -1-N frees it.
 * Reading lists the claimed channels. A claim holds a reference on the module,
 * as a driver's request does: free it before unloading.
 * Written against Debian's 6.1 kernel (get_state returns int there).
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/pwm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#define HISTORY 128

static unsigned int channels = 4;
module_param(channels, uint, 0444);
MODULE_PARM_DESC(channels, "number of PWM channels (1-64, default 4)");

struct pwm_sim_event {
	u64 t_ns;
	struct pwm_state state;
};

struct pwm_sim_channel {
	struct pwm_state state;
	struct pwm_device *claim;
	unsigned int head, count;
	struct pwm_sim_event history[HISTORY];
};

struct pwm_sim {
	struct pwm_chip chip;
	struct mutex lock;
	struct dentry *debug;
	struct pwm_sim_channel channel[];
};

static struct pwm_sim *to_sim(struct pwm_chip *chip)
{
	return container_of(chip, struct pwm_sim, chip);
}

static int pwm_sim_apply(struct pwm_chip *chip, struct pwm_device *pwm,
			 const struct pwm_state *state)
{
	struct pwm_sim *sim = to_sim(chip);

	struct pwm_sim_channel *channel = &sim->channel[pwm->hwpwm];
	struct pwm_sim_event *event;

	mutex_lock(&sim->lock);
	channel->state = *state;
	event = &channel->history[(channel->head + channel->count) % HISTORY];
	if (channel->count == HISTORY)
		channel->head = (channel->head + 1) % HISTORY;
	else
		channel->count++;
	event->t_ns = ktime_get_ns();
	event->state = *state;
	mutex_unlock(&sim->lock);
	return 0;
}

static int pwm_sim_get_state(struct pwm_chip *chip, struct pwm_device *pwm,
			     struct pwm_state *state)
{
	struct pwm_sim *sim = to_sim(chip);

	mutex_lock(&sim->lock);
	*state = sim->channel[pwm->hwpwm].state;
	mutex_unlock(&sim->lock);
	return 0;
}

static const struct pwm_ops pwm_sim_ops = {
	.apply = pwm_sim_apply,
	.get_state = pwm_sim_get_state,
	.owner = THIS_MODULE,
};

static int pwm_sim_history_show(struct seq_file *file, void *unused)
{
	struct pwm_sim *sim = file->private;
	unsigned int index, i;

	mutex_lock(&sim->lock);
	for (index = 0; index < sim->chip.npwm; index++) {
		struct pwm_sim_channel *channel = &sim->channel[index];

		for (i = 0; i < channel->count; i++) {
			struct pwm_sim_event *event = &channel->history[(channel->head + i) % HISTORY];

			seq_printf(file, "%u %llu %llu %llu %d %d\n", index, event->t_ns,
				   event->state.period, event->state.duty_cycle,
				   event->state.polarity == PWM_POLARITY_INVERSED,
				   event->state.enabled);
		}
	}
	mutex_unlock(&sim->lock);
	return 0;
}

static int pwm_sim_history_open(struct inode *inode, struct file *file)
{
	return single_open(file, pwm_sim_history_show, inode->i_private);
}

static ssize_t pwm_sim_history_write(struct file *file, const char __user *buffer,
				     size_t count, loff_t *position)
{
	struct pwm_sim *sim = ((struct seq_file *)file->private_data)->private;
	unsigned int index;
	int ret;

	ret = kstrtouint_from_user(buffer, count, 0, &index);
	if (ret)
		return ret;
	if (index >= sim->chip.npwm)
		return -EINVAL;
	mutex_lock(&sim->lock);
	sim->channel[index].head = 0;
	sim->channel[index].count = 0;
	mutex_unlock(&sim->lock);
	return count;
}

static const struct file_operations pwm_sim_history_fops = {
	.owner = THIS_MODULE,
	.open = pwm_sim_history_open,
	.read = seq_read,
	.write = pwm_sim_history_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/*
 * Claims have a lock of their own: the PWM core may call get_state()/apply()
 * (which take sim->lock) while requesting or freeing a channel.
 */
static DEFINE_MUTEX(pwm_sim_claim_lock);

static int pwm_sim_claim_show(struct seq_file *file, void *unused)
{
	struct pwm_sim *sim = file->private;
	unsigned int index;

	mutex_lock(&pwm_sim_claim_lock);
	for (index = 0; index < sim->chip.npwm; index++)
		if (sim->channel[index].claim)
			seq_printf(file, "%u\n", index);
	mutex_unlock(&pwm_sim_claim_lock);
	return 0;
}

static int pwm_sim_claim_open(struct inode *inode, struct file *file)
{
	return single_open(file, pwm_sim_claim_show, inode->i_private);
}


static ssize_t pwm_sim_claim_write(struct file *file, const char __user *buffer,
				   size_t count, loff_t *position)
{
	struct pwm_sim *sim = ((struct seq_file *)file->private_data)->private;
	struct pwm_device *pwm;
	unsigned int index;
	int value, ret;

	ret = kstrtoint_from_user(buffer, count, 0, &value);
	if (ret)
		return ret;
	index = value >= 0 ? value : -1 - value;
	if (index >= sim->chip.npwm)
		return -EINVAL;
	mutex_lock(&pwm_sim_claim_lock);
	if (value >= 0) {
		pwm = sim->channel[index].claim ? ERR_PTR(-EBUSY)
			: pwm_request_from_chip(&sim->chip, index, "pwm-sim-claim");
		ret = PTR_ERR_OR_ZERO(pwm);
		if (!ret)
			sim->channel[index].claim = pwm;
	} else {
		pwm = sim->channel[index].claim;
		ret = pwm ? 0 : -ENOENT;
		sim->channel[index].claim = NULL;
		if (pwm)
			pwm_free(pwm);
	}
	mutex_unlock(&pwm_sim_claim_lock);
	return ret ? ret : count;
}

static const struct file_operations pwm_sim_claim_fops = {
	.owner = THIS_MODULE,
	.open = pwm_sim_claim_open,
	.read = seq_read,
	.write = pwm_sim_claim_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void pwm_sim_remove_debugfs(void *data)
{
	debugfs_remove_recursive(data);
}

/* Runs before the chip is removed (devm actions run in reverse order). */
static void pwm_sim_free_claims(void *data)
{
	struct pwm_sim *sim = data;
	unsigned int index;

	/* Only an unbind finds claims here: a claim keeps the module loaded. */
	for (index = 0; index < sim->chip.npwm; index++) {
		if (sim->channel[index].claim) {
			pwm_free(sim->channel[index].claim);
			sim->channel[index].claim = NULL;
		}
	}
}

static int pwm_sim_probe(struct platform_device *pdev)
{
	struct pwm_sim *sim;
	int ret;

	sim = devm_kzalloc(&pdev->dev, struct_size(sim, channel, channels), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	mutex_init(&sim->lock);
	sim->chip.dev = &pdev->dev;
	sim->chip.ops = &pwm_sim_ops;
	sim->chip.npwm = channels;
	sim->debug = debugfs_create_dir("pwm-sim", NULL);
	debugfs_create_file("history", 0600, sim->debug, sim, &pwm_sim_history_fops);
	debugfs_create_file("claim", 0600, sim->debug, sim, &pwm_sim_claim_fops);
	ret = devm_add_action_or_reset(&pdev->dev, pwm_sim_remove_debugfs, sim->debug);
	if (ret)
		return ret;
	ret = devm_pwmchip_add(&pdev->dev, &sim->chip);
	if (ret)
		return ret;
	return devm_add_action_or_reset(&pdev->dev, pwm_sim_free_claims, sim);
}

static struct platform_driver pwm_sim_driver = {
	.probe = pwm_sim_probe,
	.driver = { .name = "pwm-sim" },
};

static struct platform_device *pwm_sim_device;

static int __init pwm_sim_init(void)
{
	int ret;

	if (channels < 1 || channels > 64)
		return -EINVAL;
	ret = platform_driver_register(&pwm_sim_driver);
	if (ret)
		return ret;
	pwm_sim_device = platform_device_register_simple("pwm-sim", -1, NULL, 0);
	if (IS_ERR(pwm_sim_device)) {
		platform_driver_unregister(&pwm_sim_driver);
		return PTR_ERR(pwm_sim_device);
	}
	return 0;
}

static void __exit pwm_sim_exit(void)
{
	platform_device_unregister(pwm_sim_device);
	platform_driver_unregister(&pwm_sim_driver);
}

module_init(pwm_sim_init);
module_exit(pwm_sim_exit);
MODULE_DESCRIPTION("Simulated PWM chip for the swift-haptics VM rig");
MODULE_LICENSE("GPL");
